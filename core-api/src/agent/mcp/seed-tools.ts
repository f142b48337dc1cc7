import { AppError, type CoreClient, IDENTITY_PLATFORMS, LEADERBOARD_METRICS, LEADERBOARD_PERIODS } from '@pts/shared';
import { z } from 'zod';
import { seedMemberIdentity } from '../../modules/compat/seed-client.service.ts';
import { type McpToolAnnotations, READ_ONLY, writes } from './tool-annotations.ts';

/** What an operator tool runs with: the brand it acts for, its signed client and an unsigned HTTP call. */
export interface OperatorContext {
  /** The brand of the credentials (lowercase). */
  brandId: string;
  /** Domain of synthetic member identities (`discord_<id>@<domain>`, PTS_SERVICE_DOMAIN). */
  serviceDomain: string;
  client: CoreClient;
  http: HttpCall;
}

export type HttpCall = (
  method: 'GET' | 'POST',
  path: string,
  options?: { body?: unknown; headers?: Record<string, string> },
) => Promise<unknown>;

export interface OperatorToolSpec<S extends z.ZodObject> {
  name: string;
  description: string;
  annotations: McpToolAnnotations;
  input: S;
  run(context: OperatorContext, args: z.output<S>): Promise<unknown>;
}

const spec = <S extends z.ZodObject>(s: OperatorToolSpec<S>) => s as unknown as OperatorToolSpec<z.ZodObject>;

// Arguments shared by the seed tools, with the seed's names.
const brandId = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be 0x followed by 40 hex digits')
  .optional()
  .describe(
    'The brand: may be left out. Always the brand whose credentials this MCP server holds; another brand is refused (403)',
  );
const platform = z.string().min(1).max(32).describe('Where the user is: discord, telegram, twitter (x), web…');
const userIdentifier = z
  .string()
  .min(3)
  .max(320)
  .describe('The member: an email, or a platform identity <platform>_<platform user id>@<service domain>');
const userEmail = z
  .string()
  .min(3)
  .max(320)
  .describe("The member's email (or a platform identity in email form, discord_123@<service domain>)");
const eventType = z.string().min(1).max(100).describe("The rule's event type (get_event_config lists the brand's)");
const metadata = z.record(z.string(), z.unknown()).optional().describe('Free JSON kept with the event (≤ 10 KB)');
const externalId = z
  .string()
  .min(1)
  .max(128)
  .optional()
  .describe('pts: an idempotency key (an order or post id); the same one is never rewarded twice');

const member = (context: OperatorContext, platformName: string, id: string, field: string) =>
  seedMemberIdentity(platformName.toLowerCase(), id, context.serviceDomain, field);
const path = (value: string) => encodeURIComponent(value.trim().toLowerCase());

/** The brand's rule amount for an event type (the seed's `amount` and `baseReward` are checked against it). */
async function ruleAmount(context: OperatorContext, type: string): Promise<number | undefined> {
  const config = await context.client.eventConfig();
  return config.events.find((event) => event.eventType === type)?.rewardAmount;
}

/**
 * The seed system's MCP tools, under the seed's names (without its product prefix) and with its arguments,
 * each one brand-signed call of the endpoint that serves the seed's request (docs/compatibility.md) — the
 * same services as every other client. Amounts are whole pts. docs/agent-api/converse-mcp.md has the table.
 */
export const SEED_TOOLS = [
  spec({
    name: 'track_event',
    annotations: writes({ destructive: false, idempotent: false }),
    description:
      "Rewards one member for one event of the brand's program (POST /pts-api/manual-event). The reward is the " +
      "rule's amount; limits, cooldowns and duplicates are judged by the server and answered as errors (429 " +
      'cooldown, 409 duplicate…). Answers the event id, rewardAmount, walletAddress and mint status.',
    input: z.object({
      brandId,
      eventType,
      userIdentifier: z
        .object({
          email: z.string().min(3).max(320).optional().describe("The member's email"),
          platform: platform.optional(),
          platformUserId: z.string().min(1).max(254).optional().describe("The member's id on that platform"),
        })
        .describe('Who is rewarded: an email, or a platform and the platform user id'),
      metadata,
      externalId,
    }),
    run: async (context, args) => {
      const { email, platform: on, platformUserId } = args.userIdentifier;
      if (!email && !(on && platformUserId)) {
        throw new AppError('VALIDATION_ERROR', 'userIdentifier: give email, or platform and platformUserId', {
          field: 'userIdentifier',
        });
      }
      const user = email ?? member(context, on as string, platformUserId as string, 'userIdentifier.platformUserId');
      return context.client.signed({
        method: 'POST',
        path: '/pts-api/manual-event',
        body: {
          brandId: context.brandId,
          eventType: args.eventType,
          userEmail: user,
          ...optional(args, 'metadata', 'externalId'),
        },
        retry: 'deduplicated',
      });
    },
  }),
  spec({
    name: 'bulk_events',
    annotations: writes({ destructive: false, idempotent: false }),
    description:
      'Sends up to 100 events at once (POST /pts-api/bulk-events); each is judged like track_event and answered ' +
      'in order with its own success or error.',
    input: z.object({
      events: z
        .array(
          z.object({
            brandId,
            eventType,
            userEmail,
            domain: z.string().max(253).optional().describe('The site the event happened on (a domain)'),
            sourceUrl: z.string().max(2048).optional().describe('The page the event happened on (https://…)'),
            metadata,
            externalId,
          }),
        )
        .min(1)
        .max(100)
        .describe('The events (1 to 100)'),
    }),
    run: (context, args) => {
      for (const event of args.events) sameBrand(context, event.brandId);
      return context.client.signed({
        method: 'POST',
        path: '/pts-api/bulk-events',
        body: { events: args.events.map((event) => ({ ...event, brandId: context.brandId })) },
        retry: 'deduplicated',
      });
    },
  }),
  spec({
    name: 'get_event_config',
    annotations: READ_ONLY,
    description:
      "The brand's active event rules (GET /pts-api/event-config): event types and ids, reward amounts in pts, " +
      'per-user and total claim limits, cooldown hours.',
    input: z.object({ brandId }),
    run: (context) =>
      context.client.signed({
        method: 'GET',
        path: '/pts-api/event-config',
        query: { brandId: context.brandId },
        retry: 'safe',
      }),
  }),
  spec({
    name: 'admin_reward',
    annotations: writes({ destructive: false, idempotent: false }),
    description:
      "A moderator rewards a member by hand: one event of the brand's rule (POST /pts-api/manual-event) with " +
      'the admin, reason and publicMessage kept in its metadata. pts pays the rule amount: an `amount` that ' +
      'differs is refused (400) before anything is paid. Limits and cooldowns apply as for every event.',
    input: z.object({
      brandId,
      adminId: z.string().min(1).max(128).optional().describe("The admin's platform id (kept for the audit trail)"),
      targetUserId: z
        .string()
        .min(1)
        .max(320)
        .describe('The member rewarded: the platform user id (with platform), or an email'),
      platform,
      eventType,
      amount: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe("The pts expected: must equal the rule's amount (pts never pays another amount)"),
      reason: z.string().max(500).optional().describe('Why (kept in the event metadata)'),
      publicMessage: z.boolean().optional().describe('Whether the caller will announce it (answered as publicEmbed)'),
      externalId,
    }),
    run: async (context, args) => {
      if (args.amount !== undefined) {
        const paid = await ruleAmount(context, args.eventType);
        if (paid !== undefined && paid !== args.amount) {
          throw new AppError(
            'VALIDATION_ERROR',
            `amount: the ${args.eventType} rule pays ${paid} pts and pts pays no other amount; leave amount out, or reward an event type whose rule pays ${args.amount}`,
            { field: 'amount' },
          );
        }
      }
      const answer = (await context.client.signed({
        method: 'POST',
        path: '/pts-api/manual-event',
        body: {
          brandId: context.brandId,
          eventType: args.eventType,
          userEmail: member(context, args.platform, args.targetUserId, 'targetUserId'),
          metadata: { adminReward: true, ...optional(args, 'adminId', 'reason', 'publicMessage') },
          ...optional(args, 'externalId'),
        },
        retry: 'deduplicated',
      })) as Record<string, unknown>;
      return {
        ...answer,
        ...(args.publicMessage
          ? {
              publicEmbed: {
                title: 'Admin Reward',
                description: args.reason ?? 'Special contribution',
                reward: answer.rewardAmount,
              },
            }
          : {}),
      };
    },
  }),
  spec({
    name: 'resolve_user',
    annotations: writes({ destructive: false, idempotent: true }),
    description:
      "A platform identity's member and wallet (POST /pts-api/pregenerate-user): the member is " +
      '<platform>_<id>@<service domain>, as the bots name it (the member track_event and the bots reward); the ' +
      'wallet is created when absent. Answers userIdentifier, walletAddress and isNew.',
    input: z.object({
      brandId,
      platform: z
        .enum([...IDENTITY_PLATFORMS, 'email'])
        .describe('The platform of platformUserId; email when platformUserId is an email'),
      platformUserId: z.string().min(1).max(320).describe('The user id on that platform (or the email)'),
      platformUsername: z.string().max(100).optional().describe('The username on that platform (kept as metadata)'),
    }),
    run: async (context, args) => {
      const user =
        args.platform === 'email'
          ? args.platformUserId
          : member(context, args.platform, args.platformUserId, 'platformUserId');
      const answer = await context.client.pregenerateUser(
        user,
        args.platformUsername ? { platformUsername: args.platformUsername } : undefined,
      );
      return { ...answer, userIdentifier: user, walletAddress: answer.wallet_address, isNew: answer.created_new };
    },
  }),
  spec({
    name: 'streak_checkin',
    annotations: writes({ destructive: false, idempotent: true }),
    description:
      "Daily check-in (POST /services/checkin): extends the member's daily streak and pays the check-in reward " +
      'times the streak multiplier, once per UTC day (a repeat answers alreadyClaimed: true and pays nothing).',
    input: z.object({
      brandId,
      userId: z.string().min(1).max(320).describe('The member: the platform user id (with platform), or an email'),
      platform,
    }),
    run: (context, args) =>
      context.client.signed({
        method: 'POST',
        path: '/services/checkin',
        body: {
          brandId: context.brandId,
          userIdentifier: member(context, args.platform, args.userId, 'userId'),
          platform: streakPlatform(args.platform),
        },
        retry: 'deduplicated',
      }),
  }),
  spec({
    name: 'get_streak_status',
    annotations: READ_ONLY,
    description:
      "A member's streak (GET /services/streak/status): current and longest in days, multiplier, next milestone " +
      'and daysToNextMilestone, unclaimed milestones. A member who never checked in has a streak of 0.',
    input: z.object({
      brandId,
      userIdentifier,
      streakType: z
        .string()
        .regex(/^[a-z][a-z0-9_]{0,31}$/, 'must be a streak name, e.g. daily')
        .optional()
        .describe('Which streak: daily (default, the check-in streak) or a streak a bot records, e.g. engagement'),
    }),
    run: (context, args) =>
      context.client.signed({
        method: 'GET',
        path: `/services/streak/status/${path(context.brandId)}/${path(args.userIdentifier)}`,
        query: { streakType: args.streakType },
        retry: 'safe',
      }),
  }),
  spec({
    name: 'claim_streak_milestone',
    annotations: writes({ destructive: false, idempotent: true }),
    description:
      'Claims a reached daily-streak milestone (POST /services/streak/claim-milestone) and pays its bonus in pts; ' +
      'a milestone not reached or already claimed answers 400 CLAIM_FAILED.',
    input: z.object({
      brandId,
      userIdentifier,
      platform: platform.optional(),
      milestoneDays: z
        .number()
        .int()
        .min(1)
        .max(3650)
        .describe("The milestone, in streak days (the brand's milestones: get_streak_status lists them)"),
      streakType: z.enum(['daily']).optional().describe('Only the daily streak has milestones'),
    }),
    run: (context, args) =>
      context.client.signed({
        method: 'POST',
        path: '/services/streak/claim-milestone',
        body: { brandId: context.brandId, userIdentifier: args.userIdentifier, milestoneDays: args.milestoneDays },
        retry: 'deduplicated',
      }),
  }),
  spec({
    name: 'get_leaderboard',
    annotations: READ_ONLY,
    description:
      "The brand's leaderboard (GET /services/leaderboard): ranked by pts earned (ltz_earned is the seed's name " +
      'for it), streak, activity or claims, over a calendar period; answers rankings (with displayName, ' +
      'formattedValue) and userRank when userIdentifier is given. Empty when nobody qualifies.',
    input: z.object({
      brandId,
      metric: z
        .enum([...LEADERBOARD_METRICS, 'ltz_earned'])
        .optional()
        .describe('What members are ranked by: pts_earned (default; ltz_earned is the same), streak, activity, claims'),
      period: z
        .enum(LEADERBOARD_PERIODS)
        .optional()
        .describe('A calendar period in UTC (daily, weekly from Monday, monthly) or all_time (default)'),
      platform: platform.optional().describe('Only members of this platform (discord, telegram, twitter…)'),
      limit: z.number().int().min(1).max(100).optional().describe('How many ranks (1 to 100, default 10)'),
      userIdentifier: userIdentifier.optional().describe('A member whose own rank is answered as userRank'),
    }),
    run: (context, args) =>
      context.client.signed({
        method: 'GET',
        path: `/services/leaderboard/${path(context.brandId)}`,
        query: {
          metric: args.metric === 'ltz_earned' ? 'pts_earned' : args.metric,
          period: args.period,
          platform: args.platform,
          limit: args.limit ?? 10,
          user: args.userIdentifier,
        },
        retry: 'safe',
      }),
  }),
  spec({
    name: 'log_activity',
    annotations: writes({ destructive: false, idempotent: false }),
    description:
      'Records a member activity (POST /services/activity/log): it counts once on the activity leaderboard ' +
      '(once per activityId when given). It pays nothing; rewards are events (track_event).',
    input: z.object({
      brandId,
      userIdentifier,
      platform,
      activityType: z
        .string()
        .regex(/^[a-z][a-z0-9_]{0,39}$/, 'must be 1 to 40 lowercase letters, digits or underscores')
        .describe("The activity: voice, message, reaction, presence (the seed's) or a name of your own"),
      durationMinutes: z.number().min(0).max(100_000).optional().describe('Minutes (voice), kept in the metadata'),
      count: z
        .number()
        .int()
        .min(0)
        .max(1_000_000)
        .optional()
        .describe('How many (messages, reactions), kept in the metadata'),
      activityId: z
        .string()
        .min(1)
        .max(128)
        .optional()
        .describe('pts: makes a repeat harmless (the same id is logged once)'),
    }),
    run: (context, args) =>
      context.client.signed({
        method: 'POST',
        path: '/services/activity/log',
        body: {
          brandId: context.brandId,
          userIdentifier: args.userIdentifier,
          activityType: args.activityType,
          platform: args.platform.toLowerCase(),
          ...optional(args, 'activityId'),
          metadata: optional(args, 'durationMinutes', 'count'),
        },
        retry: 'once',
      }),
  }),
  spec({
    name: 'calculate_reward',
    annotations: READ_ONLY,
    description:
      'What an event would pay the member now (POST /services/reward/calculate): the rule amount times the ' +
      "member's daily streak multiplier, rounded down; limits and cooldowns are not judged. Answers reward, " +
      "finalReward and the seed's breakdown. pts has no role multipliers: roleMultiplier is 1.",
    input: z.object({
      brandId,
      userIdentifier,
      platform: platform.optional(),
      eventType,
      baseReward: z
        .number()
        .min(0)
        .optional()
        .describe("Not used: pts's base is the rule amount (a differing value is reported in note)"),
      roles: z.array(z.string().max(100)).max(100).optional().describe('Not used: pts has no role multipliers'),
    }),
    run: async (context, args) => {
      const answer = (await context.client.signed({
        method: 'POST',
        path: '/services/reward/calculate',
        body: { brandId: context.brandId, userIdentifier: args.userIdentifier, eventType: args.eventType },
        retry: 'safe',
      })) as { baseReward: number; multiplier: number; reward: number };
      return {
        ...answer,
        finalReward: answer.reward,
        breakdown: { base: answer.baseReward, streakMultiplier: answer.multiplier, roleMultiplier: 1, flatBonus: 0 },
        ...(args.baseReward !== undefined && args.baseReward !== answer.baseReward
          ? {
              note: `baseReward ${args.baseReward} was not used: the ${args.eventType} rule pays ${answer.baseReward} pts`,
            }
          : {}),
      };
    },
  }),
  spec({
    name: 'update_leaderboard_stats',
    annotations: writes({ destructive: false, idempotent: true }),
    description:
      'Reports a reward the client paid (POST /services/leaderboard/update-stats). pts ranks members from its ' +
      'own ledger, so the amount is never counted (counted: false); only displayName is kept for the boards.',
    input: z.object({
      brandId,
      userIdentifier,
      platform: platform.optional(),
      ltzAmount: z.number().optional().describe('The amount the client paid: not counted (pts ranks its own ledger)'),
      ptsAmount: z.number().optional().describe('Same as ltzAmount (pts spelling): not counted'),
      claimType: z.string().max(60).optional().describe('The kind of claim (daily_checkin, purchase…)'),
      displayName: z.string().max(64).optional().describe("The member's name on the brand's leaderboards"),
    }),
    run: (context, args) =>
      context.client.signed({
        method: 'POST',
        path: '/services/leaderboard/update-stats',
        body: {
          brandId: context.brandId,
          userIdentifier: args.userIdentifier,
          ...optional(args, 'claimType', 'displayName'),
          ...(args.platform ? { platform: args.platform } : {}),
          ...((args.ltzAmount ?? args.ptsAmount) !== undefined ? { ptsAmount: args.ltzAmount ?? args.ptsAmount } : {}),
        },
        retry: 'deduplicated',
      }),
  }),
  spec({
    name: 'get_user_balance',
    annotations: READ_ONLY,
    description:
      "A member's pts with the brand (GET /services/balance): balance is spendable (read live on chain), pending " +
      'rewards not yet minted; with includeHistory, the latest activity (GET /services/activity). A member who ' +
      'never earned has 0.',
    input: z.object({
      brandId,
      userEmail,
      includeHistory: z.boolean().optional().describe('Add the latest rewards and redemptions as history'),
      historyLimit: z.number().int().min(1).max(50).optional().describe('How many history items (1 to 50, default 10)'),
    }),
    run: async (context, args) => {
      const member = `${path(context.brandId)}/${path(args.userEmail)}`;
      const balance = (await context.client.signed({
        method: 'GET',
        path: `/services/balance/${member}`,
        retry: 'safe',
      })) as Record<string, unknown>;
      if (!args.includeHistory) return balance;
      const history = (await context.client.signed({
        method: 'GET',
        path: `/services/activity/${member}`,
        query: { limit: args.historyLimit ?? 10 },
        retry: 'safe',
      })) as Record<string, unknown>;
      return { ...balance, history };
    },
  }),
  spec({
    name: 'check_eligibility',
    annotations: READ_ONLY,
    description:
      "Whether an event would reward the member now (POST /pts-api/check-eligibility): the event path's own " +
      'verdict (claims, limits, cooldown), recording nothing. Answers eligible, claimCount, maxClaims, ' +
      'rewardAmount, and when not eligible the reason and cooldownEndsAt.',
    input: z.object({ brandId, eventType, userEmail }),
    run: (context, args) =>
      context.client.signed({
        method: 'POST',
        path: '/pts-api/check-eligibility',
        body: { brandId: context.brandId, eventType: args.eventType, userEmail: args.userEmail },
        retry: 'safe',
      }),
  }),
  spec({
    name: 'get_user_stats',
    annotations: READ_ONLY,
    description:
      "A member's figures with the brand (GET /services/user-stats): balance, lifetime earned/spent/claims, " +
      'daily streak, achievements unlocked and all-time rank.',
    input: z.object({ brandId, userIdentifier, platform: platform.optional() }),
    run: (context, args) =>
      context.client.signed({
        method: 'GET',
        path: `/services/user-stats/${path(context.brandId)}/${path(args.userIdentifier)}`,
        retry: 'safe',
      }),
  }),
  spec({
    name: 'relay_transaction',
    annotations: writes({ destructive: true, idempotent: false }),
    description:
      "Relays a member's transaction gas-free (POST /relayer/relay) to a whitelisted pts contract and function, " +
      "authorised by the member's own access token (Bearer), never the brand key. Answers the transaction hash " +
      'and status (pending until mined). 35 relays per member per hour.',
    input: z.object({
      privyAccessToken: z.string().min(10).describe("The member's pts access token (from the identity provider)"),
      to: z
        .string()
        .regex(/^0x[0-9a-fA-F]{40}$/)
        .describe('The whitelisted pts contract to call (0x address)'),
      data: z
        .string()
        .regex(/^0x[0-9a-fA-F]*$/)
        .describe('The ABI-encoded call (0x…): a whitelisted function'),
      userAddress: z
        .string()
        .regex(/^0x[0-9a-fA-F]{40}$/)
        .describe("The member's wallet: the account the call acts for"),
      gasLimit: z.number().int().min(1).max(1_000_000).optional().describe('A gas limit; estimated when left out'),
      permit: z
        .record(z.string(), z.unknown())
        .optional()
        .describe('An EIP-2612 permit {owner, spender, value, deadline, v, r, s} for a gas-free approval'),
      value: z
        .string()
        .regex(/^\d+$/)
        .optional()
        .describe('Wei to send with the call (decimal string); normally left out'),
      metadata: z.record(z.string(), z.unknown()).optional().describe('Free JSON kept with the relay request'),
    }),
    run: (context, { privyAccessToken, ...body }) =>
      context.http('POST', '/relayer/relay', { body, headers: { authorization: `Bearer ${privyAccessToken}` } }),
  }),
  spec({
    name: 'create_drop',
    annotations: writes({ destructive: false, idempotent: false }),
    description:
      'Creates a time-limited drop (POST /services/drops/create): `reward` pts for each of `maxClaims` members ' +
      '(one claim each) until `expiresInSeconds` from now. Answers dropId and expiresAt; claims go through ' +
      "claim_drop and are paid through the brand's drop_claim rule.",
    input: z.object({
      brandId,
      platform,
      serverId: z.string().min(1).max(64).describe('The community the drop is posted in (a Discord server id…)'),
      eventType: z.string().min(1).max(100).describe("The drop's name (claims are recorded as drop_claim events)"),
      reward: z.number().int().min(1).max(1_000_000_000).describe('pts paid to each member who claims'),
      maxClaims: z.number().int().min(1).max(1_000_000).describe('How many members can claim in all'),
      expiresInSeconds: z
        .number()
        .int()
        .min(1)
        .max(366 * 24 * 3600)
        .describe('Seconds from now until the drop closes (at most a year)'),
      triggerType: z.enum(['reaction', 'button', 'command']).optional().describe('How members claim it (for your bot)'),
      triggerEmoji: z.string().max(64).optional().describe('The emoji of a reaction drop (for your bot)'),
    }),
    run: (context, args) =>
      context.client.signed({
        method: 'POST',
        path: '/services/drops/create',
        body: {
          brandId: context.brandId,
          platform: args.platform,
          serverId: args.serverId,
          eventType: args.eventType,
          reward: args.reward,
          maxClaims: args.maxClaims,
          expiresInSeconds: args.expiresInSeconds,
          ...optional(args, 'triggerType', 'triggerEmoji'),
        },
        retry: 'once',
      }),
  }),
  spec({
    name: 'claim_drop',
    annotations: writes({ destructive: false, idempotent: false }),
    description:
      "A member claims a drop (POST /services/drops/claim): pays the drop's reward once per member while the " +
      'drop is open and has supply. Errors: 400 CLAIM_FAILED (not_started, ended, already_claimed), 409 ' +
      "SOLD_OUT, 404 unknown drop; a drop of another brand is refused (its brand's key must sign).",
    input: z.object({
      dropId: z
        .string()
        .regex(/^drop_[0-9a-f]{16}$/, 'must be a drop id (drop_ and 16 hex characters)')
        .describe('The drop (create_drop answers it)'),
      platformUserId: z.string().min(1).max(320).describe("The member's id on that platform (or an email)"),
      platform,
    }),
    run: (context, args) =>
      context.client.signed({
        method: 'POST',
        path: '/services/drops/claim',
        body: { dropId: args.dropId, platformUserId: args.platformUserId, platform: args.platform },
        retry: 'once',
      }),
  }),
  spec({
    name: 'process_third_party_event',
    annotations: writes({ destructive: false, idempotent: false }),
    description:
      'An event of another bot (a MEE6 level-up…) as a reward (POST /services/integrations/process): the ' +
      "brand's rule <sourceBot>_<eventType>, else <eventType>, through the event pipeline for the member " +
      '<platform>_<targetUserId>. Answers processed, reward (pts), eventTriggered; 400 UNKNOWN_EVENT_TYPE ' +
      'names the rules tried.',
    input: z.object({
      brandId,
      platform,
      sourceBot: z
        .string()
        .regex(/^[a-zA-Z0-9_-]{1,40}$/, 'must name the bot, e.g. mee6')
        .describe('The bot the event comes from: mee6, arcane, tatsu, carl-bot, or any integration name'),
      eventType: z
        .string()
        .regex(/^[a-zA-Z0-9_.:-]{1,60}$/, 'must name the event, e.g. level_up')
        .describe("The bot's event: level_up, achievement, streak, message…"),
      targetUserId: z.string().min(1).max(320).describe("The member's id on that platform (or an email)"),
      level: z.number().int().min(0).max(1_000_000).optional().describe('The level reached (level_up)'),
      achievement: z.string().max(100).optional().describe('The achievement earned (achievement)'),
      rawMessage: z.string().max(500).optional().describe("The bot's message (kept in the event metadata)"),
      metadata,
    }),
    run: (context, args) =>
      context.client.signed({
        method: 'POST',
        path: '/services/integrations/process',
        body: { ...args, brandId: context.brandId },
        retry: 'deduplicated',
      }),
  }),
  spec({
    name: 'list_perks',
    annotations: READ_ONLY,
    description:
      "The brand's perk catalogue (GET /services/perks): id, name, cost in pts, category, supply. activeOnly " +
      "(default true) keeps perks that can be redeemed now; category all answers the seed's shape (available = " +
      'units left).',
    input: z.object({
      brandId,
      activeOnly: z.boolean().optional().describe('true (default): only perks on sale with supply left'),
      category: z
        .string()
        .regex(/^[a-z0-9_-]{1,50}$/, 'must be a perk category, e.g. merch')
        .optional()
        .describe("A perk category (the brand's own, e.g. merch, discount), or all"),
    }),
    run: (context, args) =>
      context.client.signed({
        method: 'GET',
        path: `/services/perks/${path(context.brandId)}`,
        query: { category: args.category, available: args.activeOnly === false ? undefined : true },
        retry: 'safe',
      }),
  }),
  spec({
    name: 'check_perk_eligibility',
    annotations: READ_ONLY,
    description:
      'Whether a member can redeem a perk now (POST /services/perks/check-eligibility): balance, supply, the ' +
      "member's limit and the perk's constraints; answers eligible and each failing check. 400 NO_WALLET for a " +
      'member without a wallet.',
    input: z.object({
      brandId,
      userIdentifier,
      platform,
      perkId: z.string().min(1).max(64).describe('The perk: its uuid or integer id (list_perks answers both)'),
    }),
    run: (context, args) =>
      context.client.signed({
        method: 'POST',
        path: '/services/perks/check-eligibility',
        body: {
          brandId: context.brandId,
          perkId: args.perkId,
          userIdentifier: args.userIdentifier,
          platform: args.platform,
        },
        retry: 'safe',
      }),
  }),
  spec({
    name: 'redeem_perk',
    annotations: writes({ destructive: true, idempotent: false }),
    description:
      "Redeems a perk for a member (POST /services/perks/redeem): spends the perk's cost from the member's pts " +
      'and answers a confirmation code. Not repeated on failure: 409 INSUFFICIENT_BALANCE, SOLD_OUT or the ' +
      "member's limit say why.",
    input: z.object({
      brandId,
      userIdentifier,
      platform: platform.optional(),
      perkId: z.string().min(1).max(64).describe('The perk: its uuid or integer id (list_perks answers both)'),
    }),
    run: (context, args) =>
      context.client.redeemPerk({
        perkId: args.perkId,
        userIdentifier: args.userIdentifier,
        ...(args.platform ? { platform: args.platform } : {}),
      }),
  }),
  spec({
    name: 'get_user_achievements',
    annotations: READ_ONLY,
    description:
      "A member's achievements with the brand (GET /services/achievements): each with its type, progress " +
      '(currentProgress), threshold and whether it is unlocked.',
    input: z.object({ brandId, userIdentifier }),
    run: (context, args) =>
      context.client.signed({
        method: 'GET',
        path: `/services/achievements/${path(context.brandId)}/${path(args.userIdentifier)}`,
        retry: 'safe',
      }),
  }),
  spec({
    name: 'update_achievement_progress',
    annotations: writes({ destructive: false, idempotent: false }),
    description:
      'Reports progress of a member toward achievements (POST /services/achievements/update-progress): ' +
      'increment true adds newValue, otherwise newValue is the value reached; achievements whose threshold is ' +
      'reached unlock and are answered. Types pts computes itself (pts earned, events, streak days) are refused.',
    input: z.object({
      brandId,
      userIdentifier,
      platform: platform.optional(),
      achievementType: z
        .string()
        .min(1)
        .max(60)
        .describe('What is counted: message_count, voice_hours, level_reached or custom_<name>'),
      newValue: z
        .number()
        .int()
        .min(0)
        .max(1_000_000_000)
        .describe('The amount to add (increment) or the value reached'),
      increment: z.boolean().optional().describe('true: add newValue to the progress; false (default): set it'),
    }),
    run: (context, args) =>
      context.client.signed({
        method: 'POST',
        path: '/services/achievements/update-progress',
        body: {
          brandId: context.brandId,
          userIdentifier: args.userIdentifier,
          achievementType: args.achievementType,
          newValue: args.newValue,
          increment: args.increment ?? false,
        },
        retry: 'once',
      }),
  }),
];

/** Refuses a `brandId` argument naming another brand than the credentials' own. */
export function sameBrand(context: OperatorContext, brand: string | undefined): void {
  if (brand !== undefined && brand.toLowerCase() !== context.brandId) {
    throw new AppError(
      'FORBIDDEN',
      `brandId ${brand} is not the brand of this MCP server's credentials (${context.brandId}); leave brandId out`,
      { field: 'brandId' },
    );
  }
}

/** The streak platform of a seed platform name (`twitter` is pts's `x`). */
function streakPlatform(name: string): string {
  const lower = name.toLowerCase();
  return lower === 'twitter' ? 'x' : lower;
}

/** The named fields of `args` that are set. */
function optional<T extends object, K extends keyof T>(args: T, ...names: K[]): Partial<Pick<T, K>> {
  const picked: Partial<Pick<T, K>> = {};
  for (const name of names) if (args[name] !== undefined) picked[name] = args[name];
  return picked;
}
