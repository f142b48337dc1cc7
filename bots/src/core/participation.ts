import { CoreApiError } from '@pts/shared';
import { groupContext, identityOf, memberMetadata } from './context.ts';
import type { BotDeps, ChatPlace, ChatUser, Reply } from './types.ts';

export type Greeting = 'good_morning' | 'good_night';

/** Good-morning and good-night phrases per language (lower case; matched case-insensitively as whole words). */
export const GREETING_PHRASES: Readonly<Record<Greeting, Readonly<Record<string, readonly string[]>>>> = {
  good_morning: {
    en: ['good morning', 'gm', 'morning all', 'morning everyone'],
    es: ['buenos días', 'buenos dias', 'buen día', 'buen dia'],
    fr: ['bonjour'],
    de: ['guten morgen'],
    pt: ['bom dia'],
    it: ['buongiorno'],
  },
  good_night: {
    en: ['good night', 'goodnight', 'gn', 'nighty night'],
    es: ['buenas noches'],
    fr: ['bonne nuit'],
    de: ['gute nacht'],
    pt: ['boa noite'],
    it: ['buonanotte', 'buona notte'],
  },
};

function phrasePattern(phrases: readonly string[]): RegExp {
  const escaped = phrases.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s+'));
  // Whole words anywhere in the message: not inside another word (Unicode letters and digits).
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${escaped.join('|')})(?![\\p{L}\\p{N}])`, 'iu');
}

const PATTERNS: readonly [Greeting, RegExp][] = (Object.keys(GREETING_PHRASES) as Greeting[]).map((greeting) => [
  greeting,
  phrasePattern(Object.values(GREETING_PHRASES[greeting]).flat()),
]);

/** The greeting a message contains, if any (good morning wins when both appear). */
export function detectGreeting(text: string): Greeting | undefined {
  for (const [greeting, pattern] of PATTERNS) if (pattern.test(text)) return greeting;
  return undefined;
}

/** Outcomes of a participation event that are expected and stay silent in the chat. */
const QUIET_CODES = new Set(['COOLDOWN_ACTIVE', 'MAX_CLAIMS_REACHED', 'DUPLICATE_EVENT', 'MAX_TOTAL_CLAIMS_REACHED']);

/**
 * A plain message in a group: pays good-morning / good-night per the group configuration. Answers only when
 * the configuration asks for a reply (`gmResponseEnabled` / `gnResponseEnabled`); cooldowns and caps stay
 * silent (a chat must not fill with refusals), other failures are logged.
 */
export async function handleMessage(
  message: { user: ChatUser; place: ChatPlace; text: string },
  deps: BotDeps,
): Promise<Reply | undefined> {
  if (message.user.isBot || message.place.groupId === null) return undefined;
  const greeting = detectGreeting(message.text);
  if (!greeting) return undefined;
  try {
    const ctx = await groupContext(message.user, message.place, deps);
    if ('reply' in ctx) return undefined;
    const group = await ctx.client.chatGroupGet(ctx.chatGroupId);
    const np = group.configMetadata.naturalParticipation;
    if (!group.isActive || !np.enabled) return undefined;
    const result = await ctx.client.manualEvent({
      eventType: greeting,
      userEmail: ctx.identityKey,
      metadata: { source_platform: message.place.platform, ...memberMetadata(message.user) },
      ...(message.place.channelId ? { channel_id: message.place.channelId } : {}),
    });
    const wantsReply = greeting === 'good_morning' ? np.gmResponseEnabled : np.gnResponseEnabled;
    if (!wantsReply) return undefined;
    const name = message.user.displayName ?? message.user.username ?? 'friend';
    return {
      text: `${greeting === 'good_morning' ? 'Good morning' : 'Good night'}, ${name}! +${result.rewardAmount} pts`,
    };
  } catch (error) {
    if (error instanceof CoreApiError && QUIET_CODES.has(error.code)) return undefined;
    deps.logger.warn(
      {
        err: error,
        event: greeting,
        platform: message.place.platform,
        groupId: message.place.groupId,
        userId: message.user.id,
      },
      'greeting reward failed',
    );
    return undefined;
  }
}

/**
 * A member joined a group: pays the welcome bonus (the brand rule `welcome_bonus`, once per user) and, when
 * `welcomeMessageEnabled`, answers with a welcome. A returning member (already paid) gets no message.
 */
export async function handleMemberJoined(
  member: { user: ChatUser; place: ChatPlace },
  deps: BotDeps,
): Promise<Reply | undefined> {
  if (member.user.isBot || member.place.groupId === null) return undefined;
  try {
    const ctx = await groupContext(member.user, member.place, deps);
    if ('reply' in ctx) return undefined;
    const group = await ctx.client.chatGroupGet(ctx.chatGroupId);
    if (!group.isActive || group.configMetadata.welcomeBonus <= 0) return undefined;
    const result = await ctx.client.manualEvent({
      eventType: 'welcome_bonus',
      userEmail: identityOf(member.user, deps),
      metadata: { source_platform: member.place.platform, ...memberMetadata(member.user) },
      ...(member.place.channelId ? { channel_id: member.place.channelId } : {}),
    });
    if (!group.configMetadata.welcomeMessageEnabled) return undefined;
    const name = member.user.displayName ?? member.user.username ?? 'there';
    return {
      text: `Welcome, ${name}! You received a welcome bonus of ${result.rewardAmount} pts. Try /daily and /help.`,
    };
  } catch (error) {
    if (error instanceof CoreApiError && QUIET_CODES.has(error.code)) return undefined;
    deps.logger.warn(
      { err: error, platform: member.place.platform, groupId: member.place.groupId, userId: member.user.id },
      'welcome bonus failed',
    );
    return undefined;
  }
}
