import {
  type Campaign,
  type Clock,
  CoreApiError,
  type CoreClient,
  type EventResponse,
  isWithinWindow,
  platformUserEmail,
} from '@pts/shared';
import type { Logger } from 'pino';
import { ApiResponseError, type TweetV2, type TwitterApiReadOnly, type UserV2 } from 'twitter-api-v2';
import { tierReadsEngagement, type XApiTier } from './config.ts';
import type { StateFile, XBotState } from './state.ts';

/** Posts handled on a first run (no high-water mark yet), spec 4.4. */
export const FIRST_RUN_POSTS = 3;
/** The brand handle's user id is looked up again after this long. */
export const BRAND_USER_TTL_MS = 24 * 3600 * 1000;
/** Campaigns that ended up to this long ago still pay posts made inside their window. */
export const CAMPAIGN_LOOKBACK_MS = 24 * 3600 * 1000;
const MAX_PAGES = 5;
const MAX_QUERY_LENGTH = 512;
const TWEET_FIELDS = [
  'author_id',
  'created_at',
  'conversation_id',
  'in_reply_to_user_id',
  'referenced_tweets',
  'entities',
] as const;

export type XEventType =
  | 'post_like'
  | 'post_repost'
  | 'post_mention'
  | 'post_reply'
  | 'post_quote'
  | 'post_thread_reply'
  | 'post_hashtag'
  | 'social_daily_engagement';

export interface PollResult {
  at: string;
  status: 'ok' | 'skipped' | 'failed' | 'rate_limited';
  /** Why a poll was skipped or failed (health shows it). */
  reason?: string;
  /** Upstream (X) requests this poll made. */
  requestsUsed: number;
  fetched: number;
  rewarded: number;
  duplicates: number;
  refused: number;
  /** Posts left for the next poll after a transient failure. */
  retryLater: number;
  postHandle: string | null;
}

export interface PollerDeps {
  x: TwitterApiReadOnly;
  core: CoreClient;
  state: StateFile;
  clock: Clock;
  logger: Logger;
  brandId: string;
  serviceDomain: string;
  tier: XApiTier;
}

interface PlannedEvent {
  eventType: XEventType;
  externalId: string;
  campaign?: Campaign;
}

class TransientFailure extends Error {}

const byId = (a: { id: string }, b: { id: string }) =>
  BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0;
const maxId = (ids: string[]) =>
  ids.reduce<string | null>((m, id) => (m === null || BigInt(id) > BigInt(m) ? id : m), null);

/** One poll of X for the brand: fetch what is new, reward it through core-api, move the marks. */
export function createPoller(deps: PollerDeps) {
  const { x, core, clock, logger } = deps;

  async function brandUser(state: XBotState, handle: string, spend: () => void): Promise<string | undefined> {
    const cached = state.brandUser;
    const now = clock.now().getTime();
    if (
      cached &&
      cached.handle.toLowerCase() === handle.toLowerCase() &&
      now - Date.parse(cached.at) < BRAND_USER_TTL_MS
    ) {
      return cached.id;
    }
    spend();
    const found = await x.v2.userByUsername(handle);
    if (!found.data) return undefined;
    state.brandUser = { handle, id: found.data.id, at: clock.now().toISOString() };
    return found.data.id;
  }

  function searchQuery(handle: string, campaigns: Campaign[]): string {
    const terms = [`url:"x.com/${handle}/status"`, `url:"twitter.com/${handle}/status"`];
    const suffix = ` -from:${handle} -is:retweet`;
    for (const tag of new Set(campaigns.map((c) => `#${c.hashtag.replace(/^#/, '')}`))) {
      if (`(${[...terms, tag].join(' OR ')})${suffix}`.length > MAX_QUERY_LENGTH) {
        logger.warn({ hashtag: tag }, 'search query is full; hashtag left out of this poll');
        continue;
      }
      terms.push(tag);
    }
    return `(${terms.join(' OR ')})${suffix}`;
  }

  function classify(
    post: TweetV2,
    context: {
      brandId: string;
      handle: string;
      fromMentions: boolean;
      brandPosts: Set<string>;
      campaigns: Campaign[];
    },
  ): PlannedEvent[] {
    const events: PlannedEvent[] = [];
    const reposted = post.referenced_tweets?.find((r) => r.type === 'retweeted');
    if (reposted) {
      // A repost is never a mention, a hashtag post or the day's engagement (the search already leaves
      // reposts out with -is:retweet). A repost of the brand's own post is the documented post_repost, paid
      // only at tiers that read reposts, under the key the retweeted_by path uses: never paid twice.
      const ofBrand = post.text.toLowerCase().startsWith(`rt @${context.handle.toLowerCase()}:`);
      if (!context.fromMentions || !ofBrand || !tierReadsEngagement(deps.tier)) return [];
      return [{ eventType: 'post_repost', externalId: repostKey(reposted.id, post.author_id!) }];
    }
    const replyTo = post.referenced_tweets?.find((r) => r.type === 'replied_to');
    const quoted = post.referenced_tweets?.find((r) => r.type === 'quoted');
    let engagement: XEventType | undefined;
    if (post.in_reply_to_user_id === context.brandId) engagement = 'post_reply';
    else if (replyTo && post.conversation_id && context.brandPosts.has(post.conversation_id)) {
      engagement = 'post_thread_reply';
    } else if (quoted && context.brandPosts.has(quoted.id)) engagement = 'post_quote';
    else if (context.fromMentions) engagement = 'post_mention';
    if (engagement) events.push({ eventType: engagement, externalId: post.id });

    const tags = new Set((post.entities?.hashtags ?? []).map((h) => h.tag.toLowerCase()));
    const postedAt = Date.parse(post.created_at ?? '');
    const campaign = context.campaigns.find(
      (c) =>
        tags.has(c.hashtag.replace(/^#/, '').toLowerCase()) &&
        Number.isFinite(postedAt) &&
        isWithinWindow({ startsAt: c.startDate, endsAt: c.endDate }, new Date(postedAt)) &&
        // "Brand posts" excluded: replies to and quotes of the brand's posts, which earn their own event.
        !(
          c.excludeBrandPosts &&
          (engagement === 'post_reply' || engagement === 'post_thread_reply' || engagement === 'post_quote')
        ),
    );
    // The campaign's per-user limit is core-api's (decided in the event's transaction): a post over it is
    // refused there, so a lost state file or a crash mid-poll cannot pay it twice.
    if (campaign) events.push({ eventType: 'post_hashtag', externalId: post.id, campaign });
    if (events.length > 0) {
      const day = new Date(Number.isNaN(postedAt) ? clock.now().getTime() : postedAt).toISOString().slice(0, 10);
      events.push({ eventType: 'social_daily_engagement', externalId: `${post.author_id}:${day}` });
    }
    return events;
  }

  /** Sends one post's events; throws TransientFailure when core-api could not answer (retry next poll). */
  async function reward(
    post: { id: string; author_id?: string | undefined; created_at?: string | undefined },
    username: string | undefined,
    events: PlannedEvent[],
    result: PollResult,
  ) {
    const identityKey = platformUserEmail('x', post.author_id!, deps.serviceDomain);
    let streak = { multiplier: 1, currentStreak: 0 };
    try {
      const activity = await core.recordStreakActivity(identityKey, 'x');
      streak = { multiplier: activity.streak.multiplier, currentStreak: activity.streak.currentStreak };
    } catch (error) {
      if (isTransient(error)) throw new TransientFailure(describe(error));
      logger.warn({ err: error, post: post.id }, 'streak activity refused; rewarding without a streak');
    }
    for (const event of events) {
      let answer: EventResponse;
      try {
        answer = await core.manualEvent({
          eventType: event.eventType,
          userEmail: identityKey,
          externalId: event.externalId,
          metadata: {
            platform: 'x',
            post_id: post.id,
            ...(post.created_at ? { posted_at: post.created_at } : {}),
            ...(username ? { displayName: `@${username}` } : {}),
            streak_multiplier: streak.multiplier,
            current_streak: streak.currentStreak,
            ...(event.campaign ? { campaign_id: event.campaign.id, hashtag: event.campaign.hashtag } : {}),
          },
        });
      } catch (error) {
        if (isTransient(error)) throw new TransientFailure(describe(error));
        // A rule's refusal (cooldown, max claims, rule not configured) is final for this post.
        result.refused += 1;
        logger.info({ post: post.id, eventType: event.eventType, code: (error as CoreApiError).code }, 'event refused');
        continue;
      }
      if (answer.duplicate) result.duplicates += 1;
      else result.rewarded += 1;
      logger.info(
        {
          post: post.id,
          eventType: event.eventType,
          amount: answer.rewardAmount,
          duplicate: answer.duplicate === true,
        },
        'post rewarded',
      );
    }
  }

  async function pollOnce(): Promise<PollResult> {
    const now = clock.now();
    const result: PollResult = {
      at: now.toISOString(),
      status: 'ok',
      requestsUsed: 0,
      fetched: 0,
      rewarded: 0,
      duplicates: 0,
      refused: 0,
      retryLater: 0,
      postHandle: null,
    };
    const state = deps.state.load();
    if (state.rateLimitedUntil && Date.parse(state.rateLimitedUntil) > now.getTime()) {
      return { ...result, status: 'rate_limited', reason: `X rate limit: waiting until ${state.rateLimitedUntil}` };
    }
    let settings: Awaited<ReturnType<CoreClient['xBotSettings']>>;
    try {
      settings = await core.xBotSettings({ since: new Date(now.getTime() - CAMPAIGN_LOOKBACK_MS) });
    } catch (error) {
      return { ...result, status: 'failed', reason: `core-api settings unavailable: ${describe(error)}` };
    }
    const handle = settings.xHandle;
    result.postHandle = handle;
    if (!handle) {
      return {
        ...result,
        status: 'skipped',
        reason: `no X handle configured for the brand: npm run -s pts -- brand set --brand ${deps.brandId} --x-handle NAME`,
      };
    }

    const spend = () => {
      result.requestsUsed += 1;
    };
    const posts = new Map<string, { post: TweetV2; fromMentions: boolean }>();
    const users = new Map<string, UserV2>();
    let brandId: string | undefined;
    // Likes and reposts of the brand's newest post (tiers that can read them): who, and on which post.
    const engagements: { kind: 'post_like' | 'post_repost'; postId: string; user: UserV2 }[] = [];
    const marks = { mentions: state.mentionsSinceId, search: state.searchSinceId };
    const newest: { mentions: string | null; search: string | null } = { mentions: null, search: null };
    try {
      brandId = await brandUser(state, handle, spend);
      if (!brandId) {
        deps.state.save(state);
        return { ...result, status: 'skipped', reason: `X has no user @${handle}: check pts brand set --x-handle` };
      }
      const params = {
        'tweet.fields': [...TWEET_FIELDS],
        expansions: ['author_id' as const],
        'user.fields': ['username' as const],
      };
      // Mentions timeline (replies to the brand are mentions too).
      spend();
      const mentions = await x.v2.userMentionTimeline(brandId, {
        ...params,
        max_results: marks.mentions ? 100 : 5,
        ...(marks.mentions ? { since_id: marks.mentions } : {}),
      });
      for (let page = 1; marks.mentions && !mentions.done && page < MAX_PAGES; page++) {
        spend();
        await mentions.fetchNext();
      }
      const mentioned = [...mentions.tweets].sort(byId).reverse();
      newest.mentions = maxId(mentioned.map((p) => p.id));
      for (const post of marks.mentions ? mentioned : mentioned.slice(0, FIRST_RUN_POSTS)) {
        posts.set(post.id, { post, fromMentions: true });
      }
      for (const user of mentions.includes.users) users.set(user.id, user);

      // One recent search: quotes of the brand's posts and the campaigns' hashtags.
      spend();
      const search = await x.v2.search(searchQuery(handle, settings.campaigns), {
        ...params,
        max_results: marks.search ? 100 : 10,
        ...(marks.search ? { since_id: marks.search } : {}),
      });
      for (let page = 1; marks.search && !search.done && page < MAX_PAGES; page++) {
        spend();
        await search.fetchNext();
      }
      const found = [...search.tweets].sort(byId).reverse();
      newest.search = maxId(found.map((p) => p.id));
      for (const post of marks.search ? found : found.slice(0, FIRST_RUN_POSTS)) {
        if (!posts.has(post.id)) posts.set(post.id, { post, fromMentions: false });
      }
      for (const user of search.includes.users) users.set(user.id, user);

      if (tierReadsEngagement(deps.tier)) {
        spend();
        const own = await x.v2.userTimeline(brandId, { max_results: 5, exclude: ['replies', 'retweets'] });
        const latest = [...own.tweets].sort(byId).at(-1);
        if (latest) {
          spend();
          const likers = await x.v2.tweetLikedBy(latest.id, { 'user.fields': ['username'] });
          spend();
          const reposters = await x.v2.tweetRetweetedBy(latest.id, { 'user.fields': ['username'] });
          for (const user of likers.data ?? []) engagements.push({ kind: 'post_like', postId: latest.id, user });
          for (const user of reposters.data ?? []) engagements.push({ kind: 'post_repost', postId: latest.id, user });
        }
      }
    } catch (error) {
      deps.state.save(state);
      if (error instanceof ApiResponseError && error.code === 429) {
        const reset = error.rateLimit?.reset ? error.rateLimit.reset * 1000 : now.getTime() + 15 * 60 * 1000;
        state.rateLimitedUntil = new Date(Math.max(reset, now.getTime() + 1000)).toISOString();
        deps.state.save(state);
        logger.warn(
          { until: state.rateLimitedUntil, requests: result.requestsUsed },
          'X rate limit reached; poll stopped',
        );
        return { ...result, status: 'rate_limited', reason: `X rate limit: waiting until ${state.rateLimitedUntil}` };
      }
      return { ...result, status: 'failed', reason: `X request failed: ${describe(error)}` };
    }
    state.rateLimitedUntil = null;
    result.fetched = posts.size;

    // The brand's posts seen (replied to, quoted): their conversations are the brand's threads.
    const brandPosts = new Set(state.brandConversations);
    const quoteLink = new RegExp(`(?:x|twitter)\\.com/${handle}/status/(\\d+)`, 'i');
    for (const { post } of posts.values()) {
      const replyTo = post.referenced_tweets?.find((r) => r.type === 'replied_to');
      if (replyTo && post.in_reply_to_user_id === brandId && post.conversation_id === replyTo.id) {
        brandPosts.add(replyTo.id);
      }
      const quoted = post.referenced_tweets?.find((r) => r.type === 'quoted');
      const linked = (post.entities?.urls ?? []).map((u) => quoteLink.exec(u.expanded_url ?? u.url)?.[1]).find(Boolean);
      if (quoted && linked === quoted.id) brandPosts.add(quoted.id);
    }
    state.brandConversations = [...brandPosts];

    const processed = new Set(state.processed);
    let firstFailed: string | undefined;
    for (const { post, fromMentions } of [...posts.values()].sort((a, b) => byId(a.post, b.post))) {
      if (processed.has(post.id)) continue;
      // The brand's own posts never earn.
      if (post.author_id === brandId || !post.author_id) {
        processed.add(post.id);
        state.processed.push(post.id);
        continue;
      }
      const events = classify(post, {
        brandId,
        handle,
        fromMentions,
        brandPosts,
        campaigns: settings.campaigns,
      });
      if (events.length > 0) {
        try {
          await reward(post, users.get(post.author_id)?.username, events, result);
        } catch (error) {
          if (!(error instanceof TransientFailure)) throw error;
          firstFailed = post.id;
          result.status = 'failed';
          result.reason = `core-api unavailable, post ${post.id} and newer are retried next poll: ${error.message}`;
          break;
        }
      }
      processed.add(post.id);
      state.processed.push(post.id);
    }
    // Likes and reposts have no since_id: each (post, user) is remembered once handled.
    for (const { kind, postId, user } of firstFailed ? [] : engagements) {
      const key = kind === 'post_repost' ? repostKey(postId, user.id) : `${kind}:${postId}:${user.id}`;
      if (user.id === brandId || processed.has(key)) continue;
      try {
        await reward({ id: postId, author_id: user.id }, user.username, [{ eventType: kind, externalId: key }], result);
      } catch (error) {
        if (!(error instanceof TransientFailure)) throw error;
        result.status = 'failed';
        result.reason = `core-api unavailable, likes and reposts are read again next poll: ${error.message}`;
        break;
      }
      processed.add(key);
      state.processed.push(key);
    }
    if (firstFailed) {
      result.retryLater = [...posts.values()].filter(
        (p) => BigInt(p.post.id) >= BigInt(firstFailed!) && !processed.has(p.post.id),
      ).length;
    }
    // Marks move past everything handled; after a transient failure, to just below the first post left.
    const below = firstFailed ? (BigInt(firstFailed) - 1n).toString() : undefined;
    const advance = (old: string | null, fetched: string | null): string | null => {
      let mark = fetched ?? old;
      if (below !== undefined && mark !== null && BigInt(mark) > BigInt(below)) mark = below;
      if (old !== null && (mark === null || BigInt(mark) < BigInt(old))) mark = old;
      return mark;
    };
    // Post ids are time-ordered across X: a source that found nothing on its first run starts from the
    // other's newest post instead of staying a first run.
    const anyNewest = maxId([newest.mentions, newest.search].filter((id): id is string => id !== null));
    state.mentionsSinceId = advance(
      state.mentionsSinceId,
      newest.mentions ?? (state.mentionsSinceId ? null : anyNewest),
    );
    state.searchSinceId = advance(state.searchSinceId, newest.search ?? (state.searchSinceId ? null : anyNewest));
    deps.state.save(state);
    logger.info(
      {
        requests: result.requestsUsed,
        fetched: result.fetched,
        rewarded: result.rewarded,
        duplicates: result.duplicates,
        refused: result.refused,
        retryLater: result.retryLater,
      },
      'X poll done',
    );
    return result;
  }

  return { pollOnce };
}

/** The idempotency key of a member's repost of a brand post, whichever path saw it. */
function repostKey(postId: string, userId: string): string {
  return `post_repost:${postId}:${userId}`;
}

/** core-api did not answer, failed, or limited the rate: the post is worth trying again. */
function isTransient(error: unknown): boolean {
  if (!(error instanceof CoreApiError)) return true;
  return error.status === 0 || error.status >= 500 || error.code === 'RATE_LIMIT_EXCEEDED' || error.code === 'CONFLICT';
}

function describe(error: unknown): string {
  if (error instanceof CoreApiError) return `${error.status} ${error.code}: ${error.message}`;
  if (error instanceof ApiResponseError) return `${error.code} ${JSON.stringify(error.data)}`;
  return error instanceof Error ? error.message : String(error);
}
