import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Clock } from '../clock.ts';
import type { ErrorDetails } from '../errors.ts';
import { type UnlinkResult, unlinkResultSchema } from '../schemas/accounts.ts';
import {
  type AchievementsResponse,
  achievementsResponseSchema,
  reportAchievementProgressResponseSchema,
} from '../schemas/achievements.ts';
import { type BalanceResponse, balanceResponseSchema } from '../schemas/balances.ts';
import {
  type ActiveCampaignsResponse,
  activeCampaignsResponseSchema,
  type ChatGroup,
  type ChatGroupConfigPatch,
  type ChatGroupSetupResponse,
  chatGroupResponseSchema,
  chatGroupSetupResponseSchema,
  type XBotSettingsResponse,
  xBotSettingsResponseSchema,
} from '../schemas/community.ts';
import {
  type CheckEligibilityResponse,
  checkEligibilityResponseSchema,
  reportChatRolesResponseSchema,
} from '../schemas/constraints.ts';
import {
  type BulkEventsResponse,
  bulkEventsResponseSchema,
  type EventConfigResponse,
  type EventRequestInput,
  type EventResponse,
  eventConfigResponseSchema,
  eventResponseSchema,
} from '../schemas/events.ts';
import {
  type ActivityResponse,
  activityResponseSchema,
  type LeaderboardResponse,
  leaderboardResponseSchema,
} from '../schemas/leaderboards.ts';
import { type PerkCatalogueResponse, perkCatalogueResponseSchema } from '../schemas/perks.ts';
import { type PregenerateUserResponse, pregenerateUserResponseSchema } from '../schemas/pregeneration.ts';
import {
  type CheckinResponse,
  type ClaimMilestoneResponse,
  checkinResponseSchema,
  claimMilestoneResponseSchema,
  type RecordActivityResponse,
  recordActivityResponseSchema,
  type StreakStatusResponse,
  streakStatusResponseSchema,
} from '../schemas/streaks.ts';
import { type MemberTierResponse, memberTierResponseSchema } from '../schemas/tiers.ts';
import { signRequest } from '../signing.ts';
import { CoreApiError, describeCause, parseJson } from './admin-client.ts';

/**
 * How a call may be repeated after a failure:
 * - `safe`: reads and calls whose repetition changes nothing (GET, eligibility checks, PATCH of a config,
 *   DELETE) — retried on transport errors, timeouts, 502/503/504 and rate limits;
 * - `deduplicated`: POSTs the server deduplicates (check-in once per UTC day, record-activity once per day,
 *   milestone claims once, events within the duplicate window, pregeneration, chat group setup) — retried
 *   only when the request certainly was not processed: connection refused, 503, rate limit;
 * - `once`: POSTs that spend or count (perk redemption, progress increments, link codes) — retried only on
 *   connection refused and rate limits, which come before any processing.
 */
export type RetryMode = 'safe' | 'deduplicated' | 'once';

export interface CoreClientOptions {
  /** Where core-api listens, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** The brand every call is made for and signed as. */
  brandId: string;
  /** The brand's security key; it signs requests and is never sent. */
  securityKey: string;
  fetch?: typeof fetch;
  /** Extra attempts after the first for retryable failures; 3 when absent. */
  retries?: number;
  /** Per-attempt limit; 10 s when absent. */
  timeoutMs?: number;
  /** Source of the signature timestamps; the system clock when absent. */
  clock?: Clock;
  /** First back-off delay (doubled per attempt, with full jitter); 200 ms when absent. */
  backoffBaseMs?: number;
  /** Longest back-off delay; 5 s when absent. */
  backoffMaxMs?: number;
  /** Longest `Retry-After` the client waits for; a longer one is thrown at once. 30 s when absent. */
  maxRetryAfterMs?: number;
  /** Replaces waiting (tests). */
  sleep?: (ms: number) => Promise<void>;
  /** Replaces Math.random for the jitter (tests). */
  random?: () => number;
}

/** Loosely typed answer of `POST /services/perks/redeem` (spec 2.3 redeem response). */
export interface RedeemPerkResult {
  success: boolean;
  confirmationCode: string | null;
  perk: { id: string; name: string; cost: number; category: string } | null;
  transactionHash?: string | null;
  [key: string]: unknown;
}

/** Answer of `POST /services/link/code`. */
export interface LinkCodeResult {
  success: boolean;
  code: string;
  expiresAt: string;
  [key: string]: unknown;
}

/** Answer of `POST /services/link/confirm`. */
export interface LinkConfirmResult {
  success: boolean;
  [key: string]: unknown;
}

/** What a streak call may carry besides the user: `displayName` is shown on the brand's leaderboards. */
export interface StreakMetadata {
  displayName?: string;
  [key: string]: unknown;
}

export interface LeaderboardOptions {
  metric?: string;
  period?: string;
  limit?: number;
  platform?: string;
  user?: string;
}

/** Typed, signed calls to every core-api endpoint the bots and the site plugin use. */
export interface CoreClient {
  /** `POST /pts-api/manual-event` for this brand (brandId is filled in). */
  manualEvent(event: Omit<EventRequestInput, 'brandId'>): Promise<EventResponse>;
  /** `POST /pts-api/bulk-events`; each event gets this brand's id. */
  bulkEvents(events: Omit<EventRequestInput, 'brandId'>[]): Promise<BulkEventsResponse>;
  /** `GET /pts-api/event-config?brandId=`: the brand's active rules. */
  eventConfig(): Promise<EventConfigResponse>;
  /** `POST /services/checkin`: once per UTC day (a repeat answers `alreadyClaimed`). */
  checkin(userIdentifier: string, platform: string, metadata?: StreakMetadata): Promise<CheckinResponse>;
  /** `POST /services/streak/record-activity`. */
  recordStreakActivity(
    userIdentifier: string,
    platform: string,
    metadata?: StreakMetadata,
  ): Promise<RecordActivityResponse>;
  /** `GET /services/streak/status/:brandId/:userIdentifier`. */
  streakStatus(userIdentifier: string): Promise<StreakStatusResponse>;
  /** `POST /services/streak/claim-milestone`. */
  claimMilestone(userIdentifier: string, milestoneDays: number): Promise<ClaimMilestoneResponse>;
  /** `GET /services/leaderboard/:brandId`. */
  leaderboard(options?: LeaderboardOptions): Promise<LeaderboardResponse>;
  /** `GET /services/achievements/:brandId/:userIdentifier`. */
  achievements(userIdentifier: string): Promise<AchievementsResponse>;
  /** `GET /services/balance/:brandId/:userIdentifier`: spendable tokens (live on chain) and pending rewards. */
  balance(userIdentifier: string): Promise<BalanceResponse>;
  /** `GET /services/tier/:brandId/:userIdentifier`: the member's VIP tier, the next one and what is left (docs/tiers.md). */
  tier(userIdentifier: string): Promise<MemberTierResponse>;
  /** `POST /services/achievements/progress`: exactly one of `increment` and `value`. */
  reportAchievementProgress(input: {
    userIdentifier: string;
    type: string;
    increment?: number;
    value?: number;
  }): Promise<z.infer<typeof reportAchievementProgressResponseSchema>>;
  /** `GET /services/activity/:brandId/:userIdentifier`. */
  activity(userIdentifier: string, options?: { limit?: number; before?: string | number }): Promise<ActivityResponse>;
  /** `GET /services/perks/:brandId`: the perk catalogue. */
  perks(options?: { category?: string; available?: boolean }): Promise<PerkCatalogueResponse>;
  /** `POST /services/perks/check-eligibility`. */
  checkEligibility(perkId: number | string, userAddress: string): Promise<CheckEligibilityResponse>;
  /**
   * `POST /services/chat-roles`: a member's current roles in a group (Discord role ids, Telegram member
   * status), for perks gated by a `chat_role` constraint. Replaces the brand's last snapshot of that member.
   */
  reportChatRoles(input: {
    platform: 'discord' | 'telegram';
    guildId: string;
    userId: string;
    roles: string[];
  }): Promise<z.infer<typeof reportChatRolesResponseSchema>>;
  /** `POST /services/perks/redeem`: spends the user's tokens; never repeated after it may have been processed. */
  redeemPerk(input: { perkId: string | number; userIdentifier: string; platform?: string }): Promise<RedeemPerkResult>;
  /** `POST /services/chat-groups/setup`: the bot's `/setup <brand_id> <security_key>` (key as the admin typed it). */
  chatGroupSetup(input: {
    securityKey?: string;
    platform: string;
    chatGroupId: string;
    groupName: string;
    setupBy: string;
  }): Promise<ChatGroupSetupResponse>;
  /** `GET /services/chat-groups/:chatGroupId` (full id `<platform>:<id>`). */
  chatGroupGet(chatGroupId: string): Promise<ChatGroup>;
  /** `PATCH /services/chat-groups/:chatGroupId`: deep-merges the changes. */
  chatGroupUpdate(
    chatGroupId: string,
    input: { groupName?: string; configMetadata?: ChatGroupConfigPatch },
  ): Promise<ChatGroup>;
  /** `DELETE /services/chat-groups/:chatGroupId`: marks it inactive. */
  chatGroupDeactivate(chatGroupId: string): Promise<ChatGroup>;
  /** `GET /services/campaigns/:brandId/active`. */
  activeCampaigns(at?: Date | string): Promise<ActiveCampaignsResponse>;
  /** `GET /services/x-bot/:brandId/settings` (signed): the brand's X handle and campaigns overlapping [since, now]. */
  xBotSettings(options?: { since?: Date | string }): Promise<XBotSettingsResponse>;
  /** `POST /pts-api/pregenerate-user` (email form): the user's wallet, created when absent. */
  pregenerateUser(email: string, metadata?: Record<string, unknown>): Promise<PregenerateUserResponse>;
  /** `POST /services/link/code`: a one-time code to link another platform's identity. */
  linkCode(userIdentifier: string): Promise<LinkCodeResult>;
  /** `POST /services/link/confirm`. */
  linkConfirm(userIdentifier: string, code: string): Promise<LinkConfirmResult>;
  /** `POST /services/link/revoke`: voids a code seen where others could read it; `revoked` false if it was not live. */
  linkRevoke(code: string): Promise<{ success: boolean; revoked: boolean }>;
  /** `POST /services/link/unlink`: takes `identityKey` (default: the caller) out of the caller's account. */
  unlink(userIdentifier: string, identityKey?: string): Promise<UnlinkResult>;
  /**
   * Any brand-signed endpoint, answered with the JSON the server sent as it is (the MCP server's seed tools
   * read the seed-compatible fields the typed methods leave out). Signed, retried and failed like the others.
   */
  signed(request: SignedRequest): Promise<unknown>;
}

/** One brand-signed call of `CoreClient.signed`. */
export interface SignedRequest {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  retry: RetryMode;
}

const errorBody = z.object({
  error: z.string(),
  code: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
  retryAfter: z.number().optional(),
});
const looseSuccess = z.looseObject({ success: z.boolean() });
const redeemSchema = z.looseObject({
  success: z.boolean(),
  confirmationCode: z.string().nullable().default(null),
  perk: z
    .looseObject({ id: z.string(), name: z.string(), cost: z.number(), category: z.string() })
    .nullable()
    .default(null),
  transactionHash: z.string().nullable().optional(),
});
const linkCodeSchema = z.looseObject({ success: z.boolean(), code: z.string(), expiresAt: z.string() });

/** Statuses a `safe` call is retried on. */
const SAFE_RETRY_STATUSES = new Set([502, 503, 504]);
/** Signature timestamps are spread this far back so identical requests never share a signature. */
const TIMESTAMP_SPREAD_SECONDS = 120;

interface CallSpec<T extends z.ZodType> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  schema: T;
  retry: RetryMode;
}

/**
 * A client for core-api on behalf of one brand. Every request is signed (GET too, empty body) with a fresh
 * signature per attempt; answers are parsed with the shared schemas; failures are `CoreApiError`s.
 */
export function createCoreClient(options: CoreClientOptions): CoreClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const brandId = options.brandId.toLowerCase();
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const retries = Math.max(0, options.retries ?? 3);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const backoffBaseMs = options.backoffBaseMs ?? 200;
  const backoffMaxMs = options.backoffMaxMs ?? 5_000;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const nowSeconds = () => Math.floor((options.clock ? options.clock.now().getTime() : Date.now()) / 1000);

  // Identical requests signed in the same second have the same signature, and the server answers a repeated
  // signature of a change with the first request's answer (an idempotent retry); two distinct calls that
  // happen to be identical must both act, so each call gets a timestamp not yet used for the same method,
  // path and body, counting back from now within the server's tolerance. Retries of one call reuse it.
  const usedTimestamps = new Map<string, Set<number>>();
  const timestampFor = (key: string): number => {
    const now = nowSeconds();
    let used = usedTimestamps.get(key);
    if (!used) {
      if (usedTimestamps.size > 10_000) pruneTimestamps(usedTimestamps, now);
      used = new Set();
      usedTimestamps.set(key, used);
    }
    for (const stamp of used) if (stamp < now - 2 * TIMESTAMP_SPREAD_SECONDS) used.delete(stamp);
    for (let back = 0; back <= TIMESTAMP_SPREAD_SECONDS; back++) {
      if (!used.has(now - back)) {
        used.add(now - back);
        return now - back;
      }
    }
    throw new CoreApiError(
      0,
      'TOO_MANY_IDENTICAL_REQUESTS',
      `More than ${TIMESTAMP_SPREAD_SECONDS} identical signed requests within ${TIMESTAMP_SPREAD_SECONDS} s`,
    );
  };

  async function attempt(
    spec: CallSpec<z.ZodType>,
    url: string,
    pathWithQuery: string,
    timestamp: number,
  ): Promise<unknown> {
    const raw = spec.body === undefined ? '' : JSON.stringify(spec.body);
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...signRequest({ securityKey: options.securityKey, method: spec.method, pathWithQuery, body: raw, timestamp }),
    };
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      response = await fetchImpl(url, {
        method: spec.method,
        headers,
        ...(spec.body === undefined ? {} : { body: raw }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
        throw new CoreApiError(0, 'TIMEOUT', `No answer from ${baseUrl} within ${timeoutMs} ms`, undefined, {
          cause: error,
        });
      }
      const reason = error instanceof Error ? (describeCause(error) ?? error.message) : String(error);
      throw new CoreApiError(0, 'UNREACHABLE', `Cannot reach ${baseUrl}: ${reason}`, { reason }, { cause: error });
    }
    const json = parseJson(text);
    if (!response.ok) {
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'), nowSeconds());
      const parsed = errorBody.safeParse(json);
      if (parsed.success) {
        throw new CoreApiError(
          response.status,
          parsed.data.code ?? `HTTP_${response.status}`,
          parsed.data.error,
          parsed.data.details as ErrorDetails | undefined,
          { retryAfter: retryAfter ?? parsed.data.retryAfter },
        );
      }
      throw new CoreApiError(
        response.status,
        `HTTP_${response.status}`,
        `${spec.method} ${pathWithQuery} answered ${response.status} ${response.statusText}`.trim(),
        undefined,
        { retryAfter },
      );
    }
    const parsed = spec.schema.safeParse(json);
    if (!parsed.success) {
      throw new CoreApiError(
        response.status,
        'INVALID_RESPONSE',
        `${spec.method} ${pathWithQuery} answered with an unexpected body; is ${baseUrl} a pts core-api?`,
        { errors: parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`) },
      );
    }
    return parsed.data;
  }

  async function call<T extends z.ZodType>(spec: CallSpec<T>): Promise<z.output<T>> {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) search.set(name, String(value));
    }
    const pathWithQuery = search.size > 0 ? `${spec.path}?${search}` : spec.path;
    const url = `${baseUrl}${pathWithQuery}`;
    const raw = spec.body === undefined ? '' : JSON.stringify(spec.body);
    const key = `${spec.method} ${pathWithQuery} ${createHash('sha256').update(raw).digest('hex')}`;
    let timestamp: number | undefined;
    for (let attemptNo = 0; ; attemptNo++) {
      timestamp ??= timestampFor(key);
      try {
        return (await attempt(spec, url, pathWithQuery, timestamp)) as z.output<T>;
      } catch (error) {
        if (!(error instanceof CoreApiError) || attemptNo >= retries) throw error;
        // A change whose answer was lost (timeout) is sent again with the SAME signature: the server answers
        // with the first attempt's outcome and never acts twice (docs/api/events.md, "Retries").
        const resend = spec.method !== 'GET' && (error.code === 'TIMEOUT' || isSignatureInUse(error));
        if (!resend && !isRetryable(error, spec.retry)) throw error;
        const delay = retryDelay(error, attemptNo);
        if (delay === undefined) throw error;
        if (!resend) timestamp = undefined;
        if (delay > 0) await sleep(delay);
      }
    }
  }

  /** Retry-After when the server gave one (up to the cap), else exponential back-off with full jitter. */
  function retryDelay(error: CoreApiError, attemptNo: number): number | undefined {
    if (isReplayRefusal(error)) return 0;
    if (error.retryAfter !== undefined) {
      const ms = error.retryAfter * 1000;
      return ms > maxRetryAfterMs ? undefined : ms;
    }
    const ceiling = Math.min(backoffMaxMs, backoffBaseMs * 2 ** attemptNo);
    return Math.round(random() * ceiling);
  }

  const brand = encodeURIComponent(brandId);
  const user = (userIdentifier: string) => encodeURIComponent(userIdentifier.trim().toLowerCase());
  const group = (chatGroupId: string) => encodeURIComponent(chatGroupId);

  return {
    manualEvent: (event) =>
      call({
        method: 'POST',
        path: '/pts-api/manual-event',
        body: { ...event, brandId },
        schema: eventResponseSchema,
        retry: 'deduplicated',
      }),
    bulkEvents: (events) =>
      call({
        method: 'POST',
        path: '/pts-api/bulk-events',
        body: { events: events.map((event) => ({ ...event, brandId })) },
        schema: bulkEventsResponseSchema,
        retry: 'deduplicated',
      }),
    eventConfig: () =>
      call({
        method: 'GET',
        path: '/pts-api/event-config',
        query: { brandId },
        schema: eventConfigResponseSchema,
        retry: 'safe',
      }),
    checkin: (userIdentifier, platform, metadata) =>
      call({
        method: 'POST',
        path: '/services/checkin',
        body: { brandId, userIdentifier, platform, ...(metadata ? { metadata } : {}) },
        schema: checkinResponseSchema,
        retry: 'deduplicated',
      }),
    recordStreakActivity: (userIdentifier, platform, metadata) =>
      call({
        method: 'POST',
        path: '/services/streak/record-activity',
        body: { brandId, userIdentifier, platform, streakType: 'daily', ...(metadata ? { metadata } : {}) },
        schema: recordActivityResponseSchema,
        retry: 'deduplicated',
      }),
    streakStatus: (userIdentifier) =>
      call({
        method: 'GET',
        path: `/services/streak/status/${brand}/${user(userIdentifier)}`,
        schema: streakStatusResponseSchema,
        retry: 'safe',
      }),
    claimMilestone: (userIdentifier, milestoneDays) =>
      call({
        method: 'POST',
        path: '/services/streak/claim-milestone',
        body: { brandId, userIdentifier, milestoneDays },
        schema: claimMilestoneResponseSchema,
        retry: 'deduplicated',
      }),
    leaderboard: (query = {}) =>
      call({
        method: 'GET',
        path: `/services/leaderboard/${brand}`,
        query: { ...query },
        schema: leaderboardResponseSchema,
        retry: 'safe',
      }),
    balance: (userIdentifier) =>
      call({
        method: 'GET',
        path: `/services/balance/${brand}/${user(userIdentifier)}`,
        schema: balanceResponseSchema,
        retry: 'safe',
      }),
    tier: (userIdentifier) =>
      call({
        method: 'GET',
        path: `/services/tier/${brand}/${user(userIdentifier)}`,
        schema: memberTierResponseSchema,
        retry: 'safe',
      }),
    achievements: (userIdentifier) =>
      call({
        method: 'GET',
        path: `/services/achievements/${brand}/${user(userIdentifier)}`,
        schema: achievementsResponseSchema,
        retry: 'safe',
      }),
    reportAchievementProgress: (input) =>
      call({
        method: 'POST',
        path: '/services/achievements/progress',
        body: { brandId, ...input },
        schema: reportAchievementProgressResponseSchema,
        // An increment counted twice would be wrong; a `value` (high-water mark) may be repeated.
        retry: input.increment === undefined ? 'deduplicated' : 'once',
      }),
    activity: (userIdentifier, query = {}) =>
      call({
        method: 'GET',
        path: `/services/activity/${brand}/${user(userIdentifier)}`,
        query: { ...query },
        schema: activityResponseSchema,
        retry: 'safe',
      }),
    perks: (query = {}) =>
      call({
        method: 'GET',
        path: `/services/perks/${brand}`,
        query: { ...query },
        schema: perkCatalogueResponseSchema,
        retry: 'safe',
      }),
    checkEligibility: (perkId, userAddress) =>
      call({
        method: 'POST',
        path: '/services/perks/check-eligibility',
        body: { brandId, perkId, userAddress },
        schema: checkEligibilityResponseSchema,
        retry: 'safe',
      }),
    reportChatRoles: (input) =>
      call({
        method: 'POST',
        path: '/services/chat-roles',
        body: { brandId, ...input },
        schema: reportChatRolesResponseSchema,
        retry: 'safe',
      }),
    redeemPerk: async (input) =>
      (await call({
        method: 'POST',
        path: '/services/perks/redeem',
        body: { brandId, ...input },
        schema: redeemSchema,
        retry: 'once',
      })) as RedeemPerkResult,
    chatGroupSetup: ({ securityKey, ...input }) =>
      call({
        method: 'POST',
        path: '/services/chat-groups/setup',
        body: { brandId, securityKey: securityKey ?? options.securityKey, ...input },
        schema: chatGroupSetupResponseSchema,
        retry: 'deduplicated',
      }),
    chatGroupGet: async (chatGroupId) =>
      (
        await call({
          method: 'GET',
          path: `/services/chat-groups/${group(chatGroupId)}`,
          schema: chatGroupResponseSchema,
          retry: 'safe',
        })
      ).chatGroup,
    chatGroupUpdate: async (chatGroupId, input) =>
      (
        await call({
          method: 'PATCH',
          path: `/services/chat-groups/${group(chatGroupId)}`,
          body: input,
          schema: chatGroupResponseSchema,
          retry: 'safe',
        })
      ).chatGroup,
    chatGroupDeactivate: async (chatGroupId) =>
      (
        await call({
          method: 'DELETE',
          path: `/services/chat-groups/${group(chatGroupId)}`,
          schema: chatGroupResponseSchema,
          retry: 'safe',
        })
      ).chatGroup,
    activeCampaigns: (at) =>
      call({
        method: 'GET',
        path: `/services/campaigns/${brand}/active`,
        query: { at: at === undefined ? undefined : new Date(at).toISOString() },
        schema: activeCampaignsResponseSchema,
        retry: 'safe',
      }),
    xBotSettings: (options = {}) =>
      call({
        method: 'GET',
        path: `/services/x-bot/${brand}/settings`,
        query: { since: options.since === undefined ? undefined : new Date(options.since).toISOString() },
        schema: xBotSettingsResponseSchema,
        retry: 'safe',
      }),
    pregenerateUser: (email, metadata) =>
      call({
        method: 'POST',
        path: '/pts-api/pregenerate-user',
        body: { brand_id: brandId, email, ...(metadata ? { metadata } : {}) },
        schema: pregenerateUserResponseSchema,
        retry: 'deduplicated',
      }),
    linkCode: async (userIdentifier) =>
      (await call({
        method: 'POST',
        path: '/services/link/code',
        body: { brandId, userIdentifier },
        schema: linkCodeSchema,
        retry: 'once',
      })) as LinkCodeResult,
    linkConfirm: async (userIdentifier, code) =>
      (await call({
        method: 'POST',
        path: '/services/link/confirm',
        body: { brandId, userIdentifier, code },
        schema: looseSuccess,
        retry: 'once',
      })) as LinkConfirmResult,
    linkRevoke: (code) =>
      call({
        method: 'POST',
        path: '/services/link/revoke',
        body: { brandId, code },
        schema: z.looseObject({ success: z.boolean(), revoked: z.boolean() }),
        retry: 'once',
      }),
    unlink: (userIdentifier, identityKey) =>
      call({
        method: 'POST',
        path: '/services/link/unlink',
        body: { brandId, userIdentifier, ...(identityKey ? { identityKey } : {}) },
        schema: unlinkResultSchema,
        retry: 'once',
      }),
    signed: (request) => call({ ...request, schema: z.unknown() }),
  };
}

/** Whether a failed attempt may be repeated under the call's retry mode. */
export function isRetryable(error: CoreApiError, mode: RetryMode): boolean {
  // Another client (a second process with the same key) sent the same bytes in the same second: the server
  // refused the signature before doing anything, and the next attempt gets another timestamp.
  if (isReplayRefusal(error)) return true;
  // Refused connections and rate limits come before any processing: every call may repeat them.
  if (error.code === 'UNREACHABLE' && error.details?.reason === 'ECONNREFUSED') return true;
  if (error.status === 429 && error.code === 'RATE_LIMIT_EXCEEDED') return true;
  if (mode === 'once') return false;
  if (mode === 'deduplicated') return error.code === 'UNREACHABLE' || error.status === 503;
  return error.code === 'UNREACHABLE' || error.code === 'TIMEOUT' || SAFE_RETRY_STATUSES.has(error.status);
}

/** The server still runs (or lost the outcome of) the first request with this signature: 409, Retry-After. */
function isSignatureInUse(error: CoreApiError): boolean {
  return error.status === 409 && error.details?.reason === 'signature_in_use';
}

function isReplayRefusal(error: CoreApiError): boolean {
  return error.status === 401 && error.code === 'INVALID_SIGNATURE' && error.details?.reason === 'replayed';
}

/** Seconds of a `Retry-After` header (delta seconds or an HTTP date, against the client's clock). */
function parseRetryAfter(header: string | null, nowSeconds: number): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil(date / 1000 - nowSeconds));
}

function pruneTimestamps(map: Map<string, Set<number>>, now: number): void {
  for (const [key, stamps] of map) {
    if ([...stamps].every((stamp) => stamp < now - 2 * TIMESTAMP_SPREAD_SECONDS)) map.delete(key);
  }
}
