import { CoreApiError } from '@pts/shared';
import type { Reply } from './types.ts';

/** `3 h 12 min`, `45 min`, `20 s`: a friendly rendering of a number of seconds. */
export function formatDuration(totalSeconds: number): string {
  const seconds = Math.max(0, Math.ceil(totalSeconds));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.ceil(seconds / 60);
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const rest = minutes % 60;
  const parts: string[] = [];
  if (days > 0) parts.push(`${days} d`);
  if (hours > 0) parts.push(`${hours} h`);
  if (rest > 0 || parts.length === 0) parts.push(`${rest} min`);
  return parts.join(' ');
}

/** Seconds from `now` to the next midnight UTC (when `/daily` resets). */
export function secondsUntilUtcMidnight(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return (next - now.getTime()) / 1000;
}

/** The reply for a group nobody has linked to a brand yet. */
export const NOT_SET_UP: Reply = {
  text: 'This group is not linked to pts yet: a group admin must run /setup <brand_id> <security_key> first.',
  ephemeral: true,
};

/** The reply in a direct message for commands that need a group (decision: DMs never guess a brand). */
export const GROUP_ONLY: Reply = {
  text: 'This command works in a group that is linked to pts. Run it there (an admin links a group with /setup).',
};

/** The generic answer to an internal failure (details go to the log, never to the chat). */
export const INTERNAL_ERROR: Reply = {
  text: 'Something went wrong on our side. It has been logged; please try again in a minute.',
};

/** The answer to a core-api refusal the bot has no specific words for. */
export const UNEXPLAINED_REFUSAL: Reply = {
  text: 'pts could not do that for you right now. It has been logged; a group admin can look into it.',
};

/** Why a check-in paid nothing, in a member's words (the server's reason stays in the log). */
export function rewardRefusedText(code: string): string {
  switch (code) {
    case 'COOLDOWN_ACTIVE':
    case 'DUPLICATE_EVENT':
      return 'you were rewarded for a check-in recently';
    case 'MAX_CLAIMS_REACHED':
    case 'MAX_TOTAL_CLAIMS_REACHED':
      return 'the check-in reward has been claimed as many times as the brand allows';
    case 'AUTOMATION_DISABLED':
      return 'the brand has paused rewards for now';
    case 'UNKNOWN_EVENT_TYPE':
      return 'the brand has not switched the check-in reward on';
    default:
      return 'the brand did not pay this one';
  }
}

function numberDetail(error: CoreApiError, name: string): number | undefined {
  const value = error.details?.[name];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * A friendly, specific answer for every outcome core-api can report; `undefined` for errors that are not
 * core-api answers (the caller logs those and answers `INTERNAL_ERROR`).
 */
export function replyForCoreError(error: unknown): Reply | undefined {
  if (!(error instanceof CoreApiError)) return undefined;
  switch (error.code) {
    case 'COOLDOWN_ACTIVE': {
      const remaining = numberDetail(error, 'remainingSeconds') ?? numberDetail(error, 'cooldownSeconds');
      return {
        text:
          remaining === undefined
            ? 'You were rewarded for this recently; come back later.'
            : `You were rewarded for this recently; come back in ${formatDuration(remaining)}.`,
      };
    }
    case 'MAX_CLAIMS_REACHED':
      return { text: 'You have already claimed this reward as many times as allowed.' };
    case 'MAX_TOTAL_CLAIMS_REACHED':
      return { text: 'This reward has been claimed as many times as the brand allows in total; it is closed.' };
    case 'DUPLICATE_EVENT':
      return { text: 'That was already counted a moment ago; nothing more to do.' };
    case 'BRAND_NOT_FOUND':
      return {
        text: 'The brand this group is linked to no longer exists in pts; a group admin should run /setup again.',
      };
    case 'AUTOMATION_DISABLED':
      return { text: 'The brand has paused rewards for now; try again later.' };
    case 'UNKNOWN_EVENT_TYPE':
      return { text: 'The brand has not switched this reward on; ask a group admin (they can run /setup again).' };
    case 'CHANNEL_NOT_ALLOWED':
      return { text: 'This reward is not available in this channel; try the channel the brand set up for it.' };
    case 'INSUFFICIENT_BALANCE': {
      const missing = numberDetail(error, 'missing');
      const balance = numberDetail(error, 'balance');
      return {
        text:
          missing === undefined
            ? 'You do not have enough pts for this perk yet.'
            : `You need ${missing} more pts for this perk${balance === undefined ? '' : ` (you have ${balance} to spend)`}.`,
      };
    }
    case 'SOLD_OUT':
      return { text: 'Sorry, this perk is sold out.' };
    case 'CLAIM_LIMIT_REACHED':
      return { text: 'You have already claimed this perk as many times as allowed.' };
    case 'NOT_ELIGIBLE':
      return { text: 'You are not eligible for this perk.' };
    case 'PERK_UNAVAILABLE':
      if (error.details?.reason === 'archived') {
        return { text: 'The brand has withdrawn that perk; see /perks for the list.' };
      }
      return { text: 'That perk does not exist or is not available; see /perks for the list.' };
    case 'PERK_NOT_FOUND':
    case 'NOT_FOUND':
      return { text: 'That perk does not exist or is not available; see /perks for the list.' };
    case 'CLAIM_FAILED': {
      const milestone = numberDetail(error, 'milestone');
      const longest = numberDetail(error, 'longestStreak');
      const name = milestone === undefined ? 'This milestone' : `The ${milestone}-day milestone`;
      switch (error.details?.reason) {
        case 'already_claimed':
          return { text: `${name} bonus was already claimed.` };
        case 'reward_refused':
          return { text: `${name} bonus cannot be paid right now; a group admin can check the brand's streak rule.` };
        case 'not_a_milestone':
          return { text: 'That is not a streak milestone; see /streak for yours.' };
        default:
          return {
            text: `${name} is not reached yet${longest === undefined ? '' : `: your longest streak is ${longest} day(s)`}.`,
          };
      }
    }
    case 'NO_WALLET':
      return { text: 'You have no pts yet: run /daily to earn your first ones.' };
    case 'INVALID_LINK_CODE':
      switch (error.details?.reason) {
        case 'expired':
          return { text: 'That link code expired (codes work 10 minutes): ask for a new one with /link.' };
        case 'used':
          return { text: 'That link code was already used or no longer works: ask for a new one with /link.' };
        default:
          return { text: 'That link code is not valid: check it, or ask for a new one with /link.' };
      }
    case 'UNAUTHORIZED':
      return { text: 'pts did not accept the brand credentials; a group admin should run /setup again.' };
    case 'RATE_LIMIT_EXCEEDED':
      return {
        text: `Too many requests right now; try again in ${formatDuration(error.retryAfter ?? 60)}.`,
      };
    case 'VALIDATION_ERROR':
      if (error.details?.reason === 'self_link' || error.details?.reason === 'same_platform') {
        return {
          text: 'A link code is confirmed from your account on the other platform, not this one. That code no longer works: ask for a new one with /link.',
        };
      }
      return { text: 'pts could not accept that request; check the command with /help.' };
    case 'CONFLICT':
      if (error.details?.reason === 'linked_elsewhere') {
        return {
          text: 'This account is already linked to another pts account: run /unlink first. That code no longer works: ask for a new one with /link.',
        };
      }
      if (error.details?.reason === 'signature_in_use') {
        return { text: 'That is still being processed; try again in a moment.' };
      }
      return UNEXPLAINED_REFUSAL;
    case 'NOT_IMPLEMENTED':
      // Operator-facing detail (configuration, CLI commands) stays in core-api's logs and message.
      return { text: 'pts does not offer that for this brand yet; a group admin can ask the brand about it.' };
    case 'UNREACHABLE':
    case 'TIMEOUT':
    case 'SERVICE_UNAVAILABLE':
      return { text: 'pts is unreachable right now; try again in a minute.' };
    default:
      if (error.status === 0 || error.status === 502 || error.status === 503 || error.status === 504)
        return { text: 'pts is unreachable right now; try again in a minute.' };
      if (error.status === 501) {
        return { text: 'pts does not offer that for this brand yet; a group admin can ask the brand about it.' };
      }
      if (error.status >= 500) return INTERNAL_ERROR;
      if (error.status === 409 && error.details?.reason === 'signature_in_use') {
        return { text: 'That is still being processed; try again in a moment.' };
      }
      // A refusal with no answer written for members: its server text (identities, internals) stays in the
      // log (registry.ts logs the code and message), the member gets a plain sentence.
      if (error.status >= 400) return UNEXPLAINED_REFUSAL;
      return undefined;
  }
}
