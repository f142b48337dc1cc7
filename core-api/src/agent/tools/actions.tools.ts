import { randomUUID } from 'node:crypto';
import {
  type AccountKey,
  AppError,
  achievementSchema,
  BULK_EVENTS_MAX,
  type BulkEventFailure,
  brandIdSchema,
  bulkEventFailureSchema,
  cleanString,
  type EventRequest,
  emailSchema,
  eventRequestSchema,
  eventResponseSchema,
  eventTypeSchema,
  idempotencyKeySchema,
  identityKeyOf,
  isAppError,
  metadataSchema,
  PRIVILEGED_SOURCES,
  perkRedemptionResponseSchema,
  perkRefSchema,
} from '@pts/shared';
import { z } from 'zod';
import { brandNotFound } from '../../modules/brands/brands.service.ts';
import type { EventCandidate } from '../../modules/events/event-batcher.ts';
import { bulkEventFailure } from '../../modules/events/events.service.ts';
import {
  brandPerksToken,
  brandSettingsToken,
  earliestAfter,
  type MemberAnswer,
  memberToken,
  nextUtcDay,
  walletToken,
} from '../../modules/ledger/member-answers.ts';
import type { MemberLedger } from '../../modules/ledger/member-ledger.ts';
import { requireBrandAuthority, requireKnownBrand } from '../actions/brand-authority.ts';
import { cachedBrands } from '../actions/cached-brands.ts';
import { type AgentPrincipal, type AgentTool, defineAgentTool } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';

/** A user id no earlier example call used: an example may run once per surface (REST, MCP, converse). */
const freshExampleUser = (label: string) => `agent-example-${label}-${randomUUID().slice(0, 8)}@example.com`;

/** Most events one `process_bulk_events` call carries (the event API's bulk bound, spec 8). */
export const AGENT_BULK_EVENTS_MAX = BULK_EVENTS_MAX;

/** An email-shaped user id (`alice@example.com`, or a platform identity `discord_123@pts.example`), lowercase. */
const userIdSchema = emailSchema;

/**
 * Metadata an agent key may not set: they are the brand's own privileges (its security key signs them),
 * never an agent's — skipping cooldowns, privileged sources and hashtag campaign rewards.
 */
function refusePrivilegedMetadata(metadata: Record<string, unknown> | undefined): void {
  if (!metadata) return;
  const claimed: string[] = [];
  if (metadata.skip_cooldown !== undefined) claimed.push('metadata.skip_cooldown');
  if (metadata.campaign_id !== undefined) claimed.push('metadata.campaign_id');
  if (typeof metadata.source === 'string' && (PRIVILEGED_SOURCES as readonly string[]).includes(metadata.source)) {
    claimed.push(`metadata.source=${metadata.source}`);
  }
  if (claimed.length > 0) {
    throw new AppError(
      'FORBIDDEN',
      `An agent key cannot claim ${claimed.join(', ')}: only the brand's own signed requests may; remove ${claimed.length === 1 ? 'it' : 'them'}`,
      { reason: 'privileged_metadata', fields: claimed },
    );
  }
}

const processEventBody = z
  .object({
    brandId: brandIdSchema,
    /** The rule's event type (get_brand lists them) … */
    eventType: eventTypeSchema.optional(),
    /** … or the rule's eventId from get_brand. */
    eventId: cleanString(z.string().min(1, 'eventId must not be empty').max(100)).optional(),
    userId: userIdSchema,
    metadata: metadataSchema.optional(),
    externalId: eventRequestSchema.shape.externalId,
  })
  .refine((body) => (body.eventType === undefined) !== (body.eventId === undefined), {
    message: 'give exactly one of eventType and eventId',
    path: ['eventType'],
  });
type ProcessEventBody = z.output<typeof processEventBody>;

/** The agent body as the event pipeline's request, after the key's authority and privileges are checked. */
async function toEventRequest(
  d: AgentToolDeps,
  body: ProcessEventBody,
  principal: AgentPrincipal | undefined,
): Promise<EventRequest> {
  requireBrandAuthority(principal, body.brandId, 'Sending an event');
  refusePrivilegedMetadata(body.metadata);
  let eventType = body.eventType;
  if (eventType === undefined) {
    const cached = await d.events.brands.get(body.brandId);
    if (!cached) throw brandNotFound(body.brandId);
    const rule = [...cached.rulesByType.values()].find((candidate) => candidate.id === body.eventId);
    if (!rule) {
      throw new AppError(
        'RULE_NOT_FOUND',
        `Brand ${body.brandId} has no event rule ${body.eventId}; get_brand lists them`,
        {
          field: 'eventId',
          value: String(body.eventId),
        },
      );
    }
    eventType = rule.event_type;
  }
  return {
    brandId: body.brandId,
    eventType,
    userEmail: body.userId,
    // Which key sent it, for the brand's audit trail (events.metadata).
    metadata: { ...(body.metadata ?? {}), agentKeyId: (principal as AgentPrincipal).keyId },
    ...(body.externalId === undefined ? {} : { externalId: body.externalId }),
  };
}

/**
 * The key is authenticated for the brand, which stands in for the brand's domain or signature check
 * (`signed: true`); the privileges a brand signature would also unlock were refused in toEventRequest.
 */
const agentEventContext = (principal: AgentPrincipal) => ({ signed: true, agentKeyId: principal.keyId }) as const;

function processEventTool(d: AgentToolDeps): AgentTool {
  return defineAgentTool({
    name: 'process_event',
    method: 'post',
    path: '/events',
    summary: 'Reward a user for an event of a brand this key acts for',
    description:
      "Sends one event through the brand's rules, exactly as the event API does: the same cooldowns, per-user " +
      'and total caps and duplicate window hold, however many agents call at once. Name the rule by `eventType` ' +
      'or by its `eventId` (get_brand lists both). `userId` is the user as an email (or a platform identity ' +
      'such as discord_123@pts.example); a new user gets a wallet. `externalId` makes retries safe (the same ' +
      'one is rewarded once). The answer has the reward in pts, the wallet and the mint transaction (mintStatus ' +
      'pending when queued). Refusals: 429 while a cooldown or cap holds, 409 duplicate, 400 unknown event type, ' +
      '403 when the key does not act for the brand or claims a brand-only privilege (skip_cooldown, privileged ' +
      'sources, campaign rewards).',
    access: 'key',
    request: { body: processEventBody },
    result: eventResponseSchema,
    example: (fixture) => ({
      body: {
        brandId: fixture.brandId,
        eventId: fixture.eventId,
        userId: freshExampleUser('event'),
        metadata: { note: 'agent tool example' },
      },
    }),
    async handle({ body }, context) {
      const input = await toEventRequest(d, body, context.principal);
      if (!context.principal) throw new AppError('UNAUTHORIZED', 'Sending events needs an agent key (X-PTS-Agent-Key)');
      return d.events.recordEvent(input, agentEventContext(context.principal));
    },
  });
}

function processBulkEventsTool(d: AgentToolDeps): AgentTool {
  return defineAgentTool({
    name: 'process_bulk_events',
    method: 'post',
    path: '/events/bulk',
    summary: `Up to ${AGENT_BULK_EVENTS_MAX} events in one call, each judged like process_event`,
    description:
      `Sends 1 to ${AGENT_BULK_EVENTS_MAX} events (each shaped like process_event's body) through the same ` +
      'pipeline, in order: identical items see each other, so a cooldown or cap lets only the first pass. The ' +
      'call fails with 400 only when the list or an item is malformed; otherwise every item gets its own ' +
      'result at its position — the event answer, or {success:false, index, code, status, error} (403 for a ' +
      'brand this key does not act for, 429 for a cooldown…). `processed` and `failed` count them.',
    access: 'key',
    request: {
      body: z.object({
        events: z
          .array(processEventBody)
          .min(1, 'events must contain at least 1 event')
          .max(AGENT_BULK_EVENTS_MAX, `events must contain at most ${AGENT_BULK_EVENTS_MAX} events`),
      }),
    },
    result: z.object({
      success: z.boolean(),
      processed: z.number().int(),
      failed: z.number().int(),
      results: z.array(z.union([eventResponseSchema, bulkEventFailureSchema])),
    }),
    example: (fixture) => ({
      body: {
        events: [
          { brandId: fixture.brandId, eventId: fixture.eventId, userId: freshExampleUser('bulk') },
          { brandId: fixture.brandId, eventId: fixture.eventId, userId: freshExampleUser('bulk') },
        ],
      },
    }),
    async handle({ body }, context) {
      if (!context.principal) throw new AppError('UNAUTHORIZED', 'Sending events needs an agent key (X-PTS-Agent-Key)');
      const events = d.events;
      // As the event API's bulk route: prepared in order, queued together (one batch where possible), then
      // their mints awaited together.
      const prepared: (EventCandidate | BulkEventFailure)[] = [];
      for (const [index, item] of body.events.entries()) {
        try {
          const input = await toEventRequest(d, item, context.principal);
          prepared.push(await events.prepareEvent(input, agentEventContext(context.principal)));
        } catch (error) {
          if (!isAppError(error)) throw error;
          prepared.push(bulkEventFailure(index, error));
        }
      }
      return events.settleBulkEvents(prepared);
    },
  });
}

function redeemPerkTool(d: AgentToolDeps): AgentTool {
  const deps = d;
  // The process's one redemption service (compose.ts), shared with /services/perks/redeem.
  const { redemption } = d;
  return defineAgentTool({
    name: 'redeem_perk',
    method: 'post',
    path: '/perks/redeem',
    summary: "Redeem a brand's perk for a user, paid from the user's pts",
    description:
      "Pays a perk of a brand this key acts for from the user's custodial wallet (pts are one token across " +
      'brands) and claims it on chain. `perkId` is the perk uuid or integer id (get_brand_perks). Checks, in ' +
      'order: perk active, spendable balance (minus pending redemptions) ≥ cost, supply, per-user maximum, ' +
      'eligibility constraints. Two redemptions racing for the same pts cannot both pass. The answer has a ' +
      'confirmation code and status confirmed (mined) or pending (sent, not mined yet). 409 for insufficient ' +
      'balance (details.missing), sold out or limit reached; 404 for an unknown perk or user; 403 when the key ' +
      "does not act for the brand. `idempotencyKey` (as process_event's externalId): a retry with the same key " +
      'for the same member answers the first redemption (replayed: true) and spends nothing; the same key for ' +
      'another perk is 409.',
    access: 'key',
    request: {
      body: z.object({
        perkId: perkRefSchema,
        userId: userIdSchema,
        brandId: brandIdSchema,
        idempotencyKey: idempotencyKeySchema.optional(),
      }),
    },
    result: perkRedemptionResponseSchema,
    example: (fixture) => ({ body: { perkId: fixture.perkId, userId: fixture.userId, brandId: fixture.brandId } }),
    async handle({ body }, context) {
      requireBrandAuthority(context.principal, body.brandId, 'Redeeming a perk');
      await requireKnownBrand(d, body.brandId);
      const account = await deps.actionsReads.resolveAccountKey(body.userId);
      if (!(await deps.actionsReads.findUsers([account])).has(account)) throw userNotFound(body.userId);
      const outcome = await redemption.redeem({
        brandId: body.brandId,
        perkId: body.perkId,
        userIdentifier: body.userId,
        idempotencyKey: body.idempotencyKey,
      });
      return outcome.body;
    },
  });
}

function userNotFound(userId: string, brandId?: string): AppError {
  return new AppError(
    'NOT_FOUND',
    brandId ? `${userId} has no events or redemptions at brand ${brandId}` : `No user ${userId} on pts`,
    { field: 'userId', value: userId },
  );
}

const userBrandParams = z.object({ userId: userIdSchema, brandId: brandIdSchema });

/** The member ledger's earnings at one brand (docs/ledger.md): every member tool shows the same three. */
const earnedFields = {
  totalEarned: z.number().int().describe('Rewards accepted for the member at the brand, whatever their mint state'),
  confirmedEarned: z
    .number()
    .int()
    .describe('The part of totalEarned recorded as minted: what the pts_earned leaderboards rank'),
  pendingEarned: z.number().int().describe('The part of totalEarned still being minted (queued or sent)'),
};

function earnedView(ledger: MemberLedger) {
  return {
    totalEarned: Number(ledger.earned),
    confirmedEarned: Number(ledger.confirmed),
    pendingEarned: Number(ledger.pending),
  };
}

/** The member's ledger at a brand the key acts for; 404 when the user never interacted with the brand. */
async function requireMember(
  d: AgentToolDeps,
  principal: AgentPrincipal | undefined,
  params: { userId: string; brandId: string },
  action: string,
): Promise<{ accountKey: AccountKey; identityKeys: string[]; ledger: MemberLedger }> {
  requireBrandAuthority(principal, params.brandId, action);
  await requireKnownBrand(d, params.brandId);
  const member = await d.actionsReads.resolveMember(params.userId);
  const ledger = await d.actionsReads.readMemberLedger(params.brandId, member);
  return { accountKey: member.accountKey, identityKeys: [...member.identityKeys], ledger };
}

/**
 * A member tool's answer kept by `d.memberAnswers` (modules/ledger/member-answers.ts) under `key` (tool,
 * brands, member, arguments), a 404 included: `compute` names what the answer depends on. The key's authority
 * is checked by the caller on every call, before this.
 */
export async function keptMemberAnswer<T>(
  d: AgentToolDeps,
  key: string[],
  compute: () => Promise<MemberAnswer<{ data: T } | { missing: AppError }>>,
): Promise<T> {
  const kept = await d.memberAnswers.answer(key.join('\n'), compute);
  if ('missing' in kept) throw kept.missing;
  return kept.data;
}

/** What a member's answer depends on: every identity of the account, the wallet, the brands' settings. */
export function memberTokens(userId: string, accountKey: string, identityKeys: string[], wallet?: string | null) {
  return [...[userId, accountKey, ...identityKeys].map(memberToken), ...(wallet ? [walletToken(wallet)] : [])];
}

/** The wallet balance of a user: pts are one token, so it is the same at every brand. */
function walletBalance(d: AgentToolDeps, userId: string) {
  return d.actionsReads.readWalletBalance(identityKeyOf(userId));
}

function getUserBalanceTool(d: AgentToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_user_balance',
    method: 'get',
    path: '/users/:userId/brands/:brandId/balance',
    summary: "A member's pts balance and what they earned and redeemed at a brand",
    description:
      "`balance` is the pts in the user's wallet right now, read on chain; pts are one token across brands, so " +
      'it is what they can spend at any brand. `pending` is rewards accepted for the wallet and not on chain yet ' +
      '(every brand). `totalEarned` (rewards accepted at this brand, whatever their mint state) = ' +
      '`confirmedEarned` (minted: what the leaderboards rank) + `pendingEarned` (still minting); ' +
      '`totalRedeemed` (confirmed perk redemptions; `pendingRedeemed` still being mined) ' +
      "are this brand's only (docs/ledger.md). All amounts are whole pts. 404 when the user has no events or redemptions at " +
      'the brand; 403 when the key does not act for the brand.',
    access: 'key',
    request: { params: userBrandParams },
    result: z.object({
      brandId: z.string(),
      userId: z.string(),
      walletAddress: z.string().nullable(),
      balance: z.number().int(),
      pending: z.number().int(),
      ...earnedFields,
      totalRedeemed: z.number().int(),
      pendingRedeemed: z.number().int(),
    }),
    example: (fixture) => ({ params: { userId: fixture.userId, brandId: fixture.brandId } }),
    async handle({ params }, context) {
      requireBrandAuthority(context.principal, params.brandId, "Reading a user's balance");
      return keptMemberAnswer(d, ['get_user_balance', params.brandId, params.userId], async () => {
        const { accountKey, identityKeys, ledger } = await requireMember(
          d,
          context.principal,
          params,
          "Reading a user's balance",
        );
        if (!ledger.known) {
          return {
            value: { missing: userNotFound(params.userId, params.brandId) },
            tokens: memberTokens(params.userId, accountKey, identityKeys),
          };
        }
        const wallet = await walletBalance(d, params.userId);
        return {
          value: {
            data: {
              brandId: params.brandId,
              userId: params.userId,
              walletAddress: wallet.walletAddress,
              balance: wallet.balance,
              pending: wallet.pending,
              ...earnedView(ledger),
              totalRedeemed: Number(ledger.redeemed),
              pendingRedeemed: Number(ledger.redeeming),
            },
          },
          tokens: memberTokens(params.userId, accountKey, identityKeys, wallet.walletAddress),
          chain: wallet.walletAddress !== null,
          keep: wallet.settled,
        };
      });
    },
  });
}

const streakViewSchema = z.object({
  current: z.number().int(),
  longest: z.number().int(),
  /** The streak still counts (not lapsed) and is at least one day. */
  active: z.boolean(),
  checkedInToday: z.boolean(),
  multiplier: z.number(),
  lastActivityAt: z.string().nullable(),
  expiresAt: z.string().nullable(),
});

type AgentStreakView = z.infer<typeof streakViewSchema>;

/**
 * A member's daily streak at each of `brandIds` (existing brands), as the member tools show it: one round
 * trip for any number of brands (readDailyStreaks, the streak service's own rules).
 */
export async function streakViews(
  d: AgentToolDeps,
  context: { clock: AgentToolDeps['clock'] },
  brandIds: string[],
  accountKey: AccountKey,
): Promise<Map<string, AgentStreakView>> {
  const views = await d.actionsReads.readDailyStreaks(context.clock, brandIds, accountKey);
  const shown = new Map<string, AgentStreakView>();
  for (const [brandId, status] of views) {
    shown.set(brandId, {
      current: status.currentStreak,
      longest: status.longestStreak,
      active: !status.lapsed && status.currentStreak > 0,
      checkedInToday: status.checkedInToday,
      multiplier: status.multiplier,
      lastActivityAt: status.lastActivityAt,
      expiresAt: status.streakExpiresAt,
    });
  }
  return shown;
}

/** A member's daily streak at one existing brand, as the member tools show it. */
export async function streakView(
  d: AgentToolDeps,
  context: { clock: AgentToolDeps['clock'] },
  brandId: string,
  userId: string,
): Promise<AgentStreakView> {
  const accountKey = await d.actionsReads.resolveAccountKey(userId);
  return (await streakViews(d, context, [brandId], accountKey)).get(brandId) as AgentStreakView;
}

function getUserStatsTool(d: AgentToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_user_stats',
    method: 'get',
    path: '/users/:userId/brands/:brandId/stats',
    summary: "A member's earnings, redemptions, streak and achievements at a brand",
    description:
      'Everything a brand knows of a member, all time: earnings (rewards accepted in pts whatever their mint ' +
      'state = confirmedEarned + pendingEarned, per event type, the last one), redemptions (confirmed count and pts spent; pending ones apart), the daily streak (current ' +
      'and longest in days, whether it still counts) and achievements (each with progress toward its ' +
      'threshold). 404 when the user has no events or redemptions at the brand; 403 when the key does not act ' +
      'for the brand.',
    access: 'key',
    request: { params: userBrandParams },
    result: z.object({
      brandId: z.string(),
      userId: z.string(),
      earnings: z.object({
        ...earnedFields,
        events: z.number().int(),
        lastEarnedAt: z.string().nullable(),
        byEventType: z.array(z.object({ eventType: z.string(), count: z.number().int(), amount: z.number().int() })),
      }),
      redemptions: z.object({
        count: z.number().int(),
        totalRedeemed: z.number().int(),
        pending: z.number().int(),
        pendingRedeemed: z.number().int(),
      }),
      streak: streakViewSchema,
      achievements: z.object({
        unlocked: z.number().int(),
        total: z.number().int(),
        items: z.array(achievementSchema),
      }),
    }),
    example: (fixture) => ({ params: { userId: fixture.userId, brandId: fixture.brandId } }),
    async handle({ params }, context) {
      requireBrandAuthority(context.principal, params.brandId, "Reading a user's stats");
      return keptMemberAnswer(d, ['get_user_stats', params.brandId, params.userId], async () => {
        const { accountKey, identityKeys, ledger } = await requireMember(
          d,
          context.principal,
          params,
          "Reading a user's stats",
        );
        const tokens = [...memberTokens(params.userId, accountKey, identityKeys), brandSettingsToken(params.brandId)];
        if (!ledger.known) return { value: { missing: userNotFound(params.userId, params.brandId) }, tokens };
        const now = context.clock.now();
        const [streak, achievements] = await Promise.all([
          streakViews(d, context, [params.brandId], accountKey).then(
            (views) => views.get(params.brandId) as AgentStreakView,
          ),
          d.actionsReads.readAchievements(params.brandId, accountKey),
        ]);
        return {
          value: {
            data: {
              brandId: params.brandId,
              userId: params.userId,
              earnings: {
                ...earnedView(ledger),
                events: ledger.acceptedEvents,
                lastEarnedAt: ledger.lastEarnedAt?.toISOString() ?? null,
                byEventType: ledger.byEventType.map((row) => ({ ...row, amount: Number(row.amount) })),
              },
              redemptions: {
                count: ledger.redemptions,
                totalRedeemed: Number(ledger.redeemed),
                pending: ledger.pendingRedemptions,
                pendingRedeemed: Number(ledger.redeeming),
              },
              streak,
              achievements: {
                unlocked: achievements.filter((item) => item.unlocked).length,
                total: achievements.length,
                items: achievements,
              },
            },
          },
          tokens,
          // The day turning (checkedInToday) or the streak lapsing changes the answer by time alone.
          validUntil: earliestAfter(now, [nextUtcDay(now), streak.expiresAt]),
        };
      });
    },
  });
}

const affordablePerkSchema = z.object({
  brandId: z.string(),
  uuid: z.string(),
  perkId: z.number().int(),
  name: z.string(),
  category: z.string(),
  cost: z.number().int(),
});

function notInPortfolio(userId: string): AppError {
  return new AppError('NOT_FOUND', `${userId} has no events or redemptions at the brands this key acts for`, {
    field: 'userId',
    value: userId,
  });
}

function getUserPortfolioTool(d: AgentToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_user_portfolio',
    method: 'get',
    path: '/users/:userId/portfolio',
    summary: "A member's pts across the brands this key acts for: earnings, streaks, best affordable perk",
    description:
      "The user's wallet (`balance` on chain, `spendable` = balance minus pending redemptions, `pending` " +
      'rewards not yet minted — pts are one token across brands) and, for each brand THIS KEY acts for where ' +
      'the user has events or redemptions: pts earned and redeemed there, the daily streak, and the most ' +
      'expensive active perk the spendable balance covers (null when none). Brands outside the key are never ' +
      'shown. `activeStreaks` lists streaks still counting; `bestAffordablePerk` is the most expensive ' +
      'affordable perk over those brands. 404 when the user is unknown to every brand of the key.',
    access: 'key',
    request: { params: z.object({ userId: userIdSchema }) },
    result: z.object({
      userId: z.string(),
      walletAddress: z.string().nullable(),
      balance: z.number().int(),
      spendable: z.number().int(),
      pending: z.number().int(),
      brands: z.array(
        z.object({
          brandId: z.string(),
          name: z.string(),
          ...earnedFields,
          totalRedeemed: z.number().int(),
          streak: streakViewSchema,
          bestAffordablePerk: affordablePerkSchema.nullable(),
        }),
      ),
      activeStreaks: z.array(z.object({ brandId: z.string(), current: z.number().int() })),
      bestAffordablePerk: affordablePerkSchema.nullable(),
      note: z.string(),
    }),
    example: (fixture) => ({ params: { userId: fixture.userId } }),
    async handle({ params }, context) {
      const principal = context.principal;
      if (!principal) throw new AppError('UNAUTHORIZED', "Reading a user's portfolio needs an agent key");
      // In the key's order: the answer lists the brands so.
      const brandIds = [...new Set(principal.brandIds.map((id) => id.toLowerCase()))];
      return keptMemberAnswer(d, ['get_user_portfolio', brandIds.join(','), params.userId], () =>
        portfolioOf(d, context, brandIds, params.userId),
      );
    },
  });
}

/** get_user_portfolio's answer over `brandIds` (the key's), with what it depends on. */
async function portfolioOf(
  d: AgentToolDeps,
  context: { clock: AgentToolDeps['clock'] },
  brandIds: string[],
  userId: string,
) {
  const now = context.clock.now();
  const member = await d.actionsReads.resolveMember(userId);
  const { accountKey } = member;
  const keys = [...member.identityKeys];
  // The member's ledger and streak at every brand of the key, one statement each, beside the wallet; only
  // the brands that know them are shown.
  const [wallet, ledgers, streaks] = await Promise.all([
    walletBalance(d, userId),
    d.actionsReads.readMemberLedgers(brandIds, member),
    streakViews(d, context, brandIds, accountKey),
  ]);
  const tokens = [
    ...memberTokens(userId, accountKey, keys, wallet.walletAddress),
    ...brandIds.flatMap((brandId) => [brandSettingsToken(brandId), brandPerksToken(brandId)]),
  ];
  const chain = wallet.walletAddress !== null;
  const knownIds = brandIds.filter((brandId) => ledgers.get(brandId)?.known);
  if (knownIds.length === 0) return { value: { missing: notInPortfolio(userId) }, tokens, chain };
  const spendable = BigInt(wallet.balance) > wallet.reserved ? BigInt(wallet.balance) - wallet.reserved : 0n;
  const [names, perks] = await Promise.all([
    cachedBrands(d, knownIds),
    d.actionsReads.bestAffordablePerks(knownIds, spendable, keys, now),
  ]);
  const nameOf = new Map(names.map(({ brand }) => [brand.address, brand.name]));
  const brands = knownIds.flatMap((brandId) => {
    const name = nameOf.get(brandId);
    const ledger = ledgers.get(brandId);
    const streak = streaks.get(brandId);
    if (name === undefined || !ledger || !streak) return [];
    const perk = perks.best.get(brandId);
    return [
      {
        brandId,
        name,
        ...earnedView(ledger),
        totalRedeemed: Number(ledger.redeemed),
        streak,
        bestAffordablePerk: perk
          ? {
              brandId,
              uuid: perk.public_id,
              perkId: Number(perk.id),
              name: perk.name,
              category: perk.category,
              cost: Number(perk.cost),
            }
          : null,
      },
    ];
  });
  if (brands.length === 0) return { value: { missing: notInPortfolio(userId) }, tokens, chain };
  const best = brands
    .map((brand) => brand.bestAffordablePerk)
    .filter((perk) => perk !== null)
    .reduce<z.infer<typeof affordablePerkSchema> | null>(
      (top, perk) => (!top || perk.cost > top.cost ? perk : top),
      null,
    );
  return {
    value: {
      data: {
        userId,
        walletAddress: wallet.walletAddress,
        balance: wallet.balance,
        spendable: Number(spendable),
        pending: wallet.pending,
        brands,
        activeStreaks: brands
          .filter((b) => b.streak.active)
          .map((b) => ({ brandId: b.brandId, current: b.streak.current })),
        bestAffordablePerk: best,
        note: 'Only brands this agent key acts for are shown; balance and spendable are the one pts wallet.',
      },
    },
    tokens,
    chain,
    keep: wallet.settled,
    // The day turning, a streak lapsing or a perk window opening or closing changes it by time alone.
    validUntil: earliestAfter(now, [
      nextUtcDay(now),
      perks.changesAt,
      ...[...streaks.values()].map((streak) => streak.expiresAt),
    ]),
  };
}

/** The action tools of the agent API (spec 4.1): members' balances and stats, events and redemptions. */
export function actionsTools(d: AgentToolDeps): AgentTool[] {
  return [
    getUserBalanceTool(d),
    getUserStatsTool(d),
    getUserPortfolioTool(d),
    processEventTool(d),
    processBulkEventsTool(d),
    redeemPerkTool(d),
  ];
}
