import { AppError, brandAnalyticsQuerySchema, brandAnalyticsSchema, brandIdSchema } from '@pts/shared';
import { z } from 'zod';
import { answerKey, rememberRead } from '../../caching/answer-cache.ts';
import type { EventTypeActivity, TrendCounts, WindowTotals } from '../../modules/analytics/analytics.repository.ts';
import { analyticsWindowOf } from '../../modules/analytics/brand-analytics.ts';
import { formatCents, parseUsdToCents } from '../../modules/payments/payment-amounts.ts';
import { requireBrandAuthority, requireKnownBrand } from '../actions/brand-authority.ts';
import { limitTextOut, limitTextSchema } from '../agent-limits.ts';
import { type AgentTool, defineAgentTool } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';
import {
  bestPurchaseRule,
  compareBrandActivity,
  growthPercent,
  healthReport,
  momentum,
  PERIODS,
  type Period,
  PTS_PER_USD,
  percentOf,
  periodWindows,
  purchaseReward,
  ratio,
  type TimeWindow,
} from '../analytics/formulas.ts';
import type { DirectoryBrand } from '../discovery/brand-directory.repository.ts';
import { BRAND_CATEGORIES, BRANDS_LIST_MAX } from './discovery.tools.ts';

/** A brand's dashboard through the agent API is kept at most this long (served stale up to 3× while recomputed). */
export const BRAND_DASHBOARD_MAX_AGE_SECONDS = 10;

/** Spec 8 bounds. */
export const COMPARE_BRANDS_MIN = 2;
export const COMPARE_BRANDS_MAX = 5;
export const CASHBACK_BRANDS_MAX = 10;
export const RANKINGS_MAX = 10;
export const TRENDING_MAX = 50;
/** Flows listed at most (the busiest first). */
const FLOWS_MAX = 50;
/** Health, rankings and cashback observations look at the last 30 days. */
const HEALTH_PERIOD: Period = '30d';

const amount = z.string().regex(/^\d+$/).describe('Whole pts, as a decimal string (exact)');
const basis = z.object({
  period: z.string(),
  from: z.string().nullable().describe('ISO 8601; null for all time'),
  to: z.string(),
  sampleSize: z.number().int().describe('Records the numbers are computed from (events, members or redemptions)'),
  note: z.string().optional(),
});
const brandParams = z.object({ brandId: brandIdSchema });

/** `period` (7d, 30d, 90d) with a default. */
const periodQuery = (fallback: Period) =>
  z
    .enum(PERIODS, { message: `period must be one of ${PERIODS.join(', ')}` })
    .default(fallback)
    .describe(`Window ending now: ${PERIODS.join(', ')} (default ${fallback})`);

/** `limit` within 1..max (REST sends strings). */
const limitQuery = (max: number, fallback: number) =>
  z.coerce
    .number({ message: 'limit must be a number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(max, `limit must be at most ${max}`)
    .default(fallback);

/** A comma list of distinct Brand IDs (0x addresses, any case), `min..max` of them. */
const brandIdList = (min: number, max: number) =>
  z
    .string({ message: `brandIds must list ${min} to ${max} Brand IDs, comma-separated` })
    .transform((value, ctx) => {
      const ids = [...new Set(value.split(',').map((id) => id.trim().toLowerCase()))].filter(Boolean);
      const bad = ids.filter((id) => !brandIdSchema.safeParse(id).success);
      if (bad.length > 0) {
        ctx.addIssue({ code: 'custom', message: `brandIds: not a Brand ID (0x address): ${bad.join(', ')}` });
        return z.NEVER;
      }
      if (ids.length < min || ids.length > max) {
        ctx.addIssue({
          code: 'custom',
          message: `brandIds must list ${min} to ${max} distinct Brand IDs, comma-separated (got ${ids.length})`,
        });
        return z.NEVER;
      }
      return ids;
    })
    .describe(`${min} to ${max} Brand IDs (0x addresses), comma-separated`);

/** A USD amount above 0 with up to 2 decimals (`25`, `19.99`) → integer cents (exact). */
export const usdCents = (field: string) =>
  z
    .string({ message: `${field} is required: a USD amount such as 25 or 19.99` })
    .trim()
    .transform((value, ctx) => {
      const cents = parseUsdToCents(value);
      if (cents === undefined || cents === 0n) {
        ctx.addIssue({
          code: 'custom',
          message: `${field} must be a USD amount above 0 with up to 2 decimals, such as 25 or 19.99`,
        });
        return z.NEVER;
      }
      return cents;
    });

const category = z
  .string()
  .trim()
  .transform((value) => value.toLowerCase())
  .pipe(z.enum(BRAND_CATEGORIES, { message: `category must be one of ${BRAND_CATEGORIES.join(', ')}` }));

function basisOf(window: TimeWindow, period: string, sampleSize: number, note?: string) {
  return {
    period,
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    sampleSize,
    ...(note ? { note } : {}),
  };
}

const totalsSchema = z.object({
  acceptedEvents: z.number().int(),
  rejectedEvents: z.number().int(),
  members: z.number().int().describe('Distinct members with an accepted event'),
  newMembers: z.number().int().describe('Members whose first accepted event falls in the window'),
  ptsIssued: amount,
  redemptions: z.number().int(),
  redeemers: z.number().int().describe('Distinct redeemers in the window who are members of the brand'),
  ptsRedeemed: amount,
  eventsPerMember: z.number(),
  redemptionRatePercent: z
    .number()
    .nullable()
    .describe("Share of the window's members who redeemed in it, × 100; null without members"),
});

function totalsView(t: WindowTotals) {
  return {
    acceptedEvents: t.acceptedEvents,
    rejectedEvents: t.rejectedEvents,
    members: t.members,
    newMembers: t.newMembers,
    ptsIssued: t.ptsIssued.toString(),
    redemptions: t.redemptions,
    redeemers: t.redeemers,
    ptsRedeemed: t.ptsRedeemed.toString(),
    eventsPerMember: ratio(t.acceptedEvents, t.members),
    redemptionRatePercent: percentOf(t.activeRedeemers, t.members),
  };
}

const growthSchema = z
  .object({
    acceptedEvents: z.number().nullable(),
    members: z.number().nullable(),
    ptsIssued: z.number().nullable(),
    redemptions: z.number().nullable(),
  })
  .describe('Percent change from the previous window of the same length; null when the previous value is 0');

function growthView(current: WindowTotals, previous: WindowTotals) {
  return {
    acceptedEvents: growthPercent(current.acceptedEvents, previous.acceptedEvents),
    members: growthPercent(current.members, previous.members),
    ptsIssued: growthPercent(Number(current.ptsIssued), Number(previous.ptsIssued)),
    redemptions: growthPercent(current.redemptions, previous.redemptions),
  };
}

const eventTypeSchema = z.object({
  eventType: z.string(),
  accepted: z.number().int(),
  rejected: z.number().int(),
  members: z.number().int(),
  ptsIssued: amount,
  sharePercent: z.number().nullable().describe("Share of the scope's accepted events"),
});

const healthSchema = z.object({
  brandId: z.string(),
  score: z.number().int().min(0).max(100),
  grade: z.enum(['A', 'B', 'C', 'D', 'F']),
  components: z.array(
    z.object({
      name: z.enum(['engagement', 'retention', 'growth', 'redemption', 'program']),
      score: z.number().nullable().describe('Null when the component cannot be measured yet (see note)'),
      max: z.literal(20),
      value: z.number().nullable(),
      note: z.string().optional(),
    }),
  ),
  notEnoughHistory: z
    .array(z.string())
    .describe('Components left out of the score for lack of history (retention without previous members)'),
  strengths: z.array(z.string()),
  weaknesses: z.array(z.string()),
  recommendations: z.array(z.string()),
  inputs: z.object({
    members: z.number().int(),
    previousMembers: z.number().int(),
    retainedMembers: z.number().int(),
    events: z.number().int(),
    redeemers: z.number().int(),
    streakMembers: z.number().int(),
    activeRules: z.number().int(),
    availablePerks: z.number().int(),
  }),
  basis,
});

const trendItem = z.object({
  id: z.string(),
  name: z.string(),
  brandId: z.string().nullable(),
  current: z.number().int(),
  previous: z.number().int(),
  growthPercent: z.number().nullable(),
  momentum: z.number(),
});

/** Every brand of a category from the directory, paging through it (the directory's own filter). */
async function brandsOfCategory(d: AgentToolDeps, wanted: string | undefined): Promise<DirectoryBrand[]> {
  const all: DirectoryBrand[] = [];
  for (let offset = 0; ; offset += BRANDS_LIST_MAX) {
    const page = await d.analyticsReads.listDirectoryBrands({ category: wanted, limit: BRANDS_LIST_MAX, offset });
    all.push(...page.brands);
    if (page.brands.length < BRANDS_LIST_MAX) return all;
  }
}

/** 404 naming every unknown Brand ID of a list. */
async function requireBrands(d: AgentToolDeps, brandIds: string[]): Promise<Map<string, string>> {
  const names = await d.analyticsReads.readBrandNames(brandIds);
  const unknown = brandIds.filter((id) => !names.has(id));
  if (unknown.length > 0) {
    throw new AppError('NOT_FOUND', `No brand ${unknown.join(', ')}`, { field: 'brandIds', value: unknown.join(',') });
  }
  return names;
}

/**
 * One brand's (or the network's) totals over one window, shared by brand analytics, health, comparisons and
 * the network view through the answer cache: keyed by the window's length and how long ago it ended.
 */
function windowTotals(d: AgentToolDeps, brandId: string | undefined, window: TimeWindow): Promise<WindowTotals> {
  return rememberRead(d, 'window_totals', windowKey(d, brandId, window), () =>
    d.analyticsReads.readWindowTotals(brandId, window),
  );
}

/** One brand's (or the network's) activity per event type over one window, shared like `windowTotals`. */
function eventTypeActivity(
  d: AgentToolDeps,
  brandId: string | undefined,
  window: TimeWindow,
): Promise<EventTypeActivity[]> {
  return rememberRead(d, 'event_type_activity', windowKey(d, brandId, window), () =>
    d.analyticsReads.readEventTypeActivity(brandId, window),
  );
}

/** A scope and a window as a cache key: the window's length and how many days ago it ended. */
function windowKey(d: AgentToolDeps, brandId: string | undefined, window: TimeWindow) {
  const endedAgoMs = d.clock.now().getTime() - window.to.getTime();
  return { brandId: brandId ?? '*', days: window.days, endedAgoDays: Math.round(endedAgoMs / 86_400_000) };
}

/** Analytics of the network and of one brand (spec 4.1 `/analytics/*`), all public aggregates. */
function analyticsAreaTools(d: AgentToolDeps): AgentTool[] {
  const reads = d.analyticsReads;

  async function brandHealth(brandId: string, now: Date) {
    const { current, previous } = periodWindows(now, HEALTH_PERIOD);
    const [cur, prev, retained, streaks, program] = await Promise.all([
      windowTotals(d, brandId, current),
      windowTotals(d, brandId, previous),
      reads.readRetainedMembers(brandId, previous, current),
      reads.readStreakTotals(brandId, current),
      reads.readProgramSize(brandId),
    ]);
    const inputs = {
      members: cur.members,
      previousMembers: prev.members,
      retainedMembers: retained,
      events: cur.acceptedEvents,
      redeemers: cur.activeRedeemers,
      streakMembers: streaks.streakMembers,
      activeRules: program.activeRules,
      availablePerks: program.availablePerks,
    };
    return { ...healthReport(inputs), inputs, current };
  }

  return [
    defineAgentTool({
      name: 'get_network_analytics',
      method: 'get',
      path: '/analytics/network',
      summary: 'Network activity over 7, 30 or 90 days, with growth against the window before',
      description:
        'Network-wide totals over the period (7d, 30d default, 90d) ending now: accepted and rejected events, active members, new members (first accepted event in the window), active brands, pts issued by accepted events, redemptions and pts redeemed, events per member and redemption rate; the same for the previous window of the same length and growth in % (null when the previous value is 0); the top 10 event types. Agent identities excluded. An empty network answers zeros with sampleSize 0 and a note.',
      access: 'public',
      cached: true,
      request: { query: z.object({ period: periodQuery('30d') }) },
      result: z.object({
        activeBrands: z.number().int(),
        current: totalsSchema,
        previous: totalsSchema,
        growth: growthSchema,
        topEventTypes: z.array(eventTypeSchema),
        basis,
      }),
      example: () => ({ query: { period: '30d' } }),
      async handle({ query }, context) {
        const { current, previous } = periodWindows(context.clock.now(), query.period);
        const [cur, prev, types] = await Promise.all([
          windowTotals(d, undefined, current),
          windowTotals(d, undefined, previous),
          eventTypeActivity(d, undefined, current),
        ]);
        return {
          activeBrands: cur.activeBrands,
          current: totalsView(cur),
          previous: totalsView(prev),
          growth: growthView(cur, prev),
          topEventTypes: types.slice(0, 10).map((t) => eventTypeView(t, cur.acceptedEvents)),
          basis: basisOf(
            current,
            query.period,
            cur.acceptedEvents + cur.redemptions,
            cur.acceptedEvents + cur.redemptions === 0
              ? 'No accepted event and no redemption in the period'
              : undefined,
          ),
        };
      },
    }),

    defineAgentTool({
      name: 'get_brand_analytics',
      method: 'get',
      path: '/analytics/brands/:brandId',
      summary: "A brand's activity over 7, 30 or 90 days, with growth and streaks",
      description:
        "One brand's totals over the period (7d, 30d default, 90d) ending now: accepted and rejected events, active and new members, pts issued, redemptions and pts redeemed, events per member, redemption rate; the previous window and growth in % (null when the previous value is 0); members with a streak of 2+ extended in the window and the longest such streak; the top event types. 404 for an unknown brand. A brand without activity answers zeros with sampleSize 0 and a note.",
      access: 'public',
      cached: true,
      request: { params: brandParams, query: z.object({ period: periodQuery('30d') }) },
      result: z.object({
        brandId: z.string(),
        current: totalsSchema,
        previous: totalsSchema,
        growth: growthSchema,
        streaks: z.object({ members: z.number().int(), longestCurrent: z.number().int() }),
        topEventTypes: z.array(eventTypeSchema),
        basis,
      }),
      example: (f) => ({ params: { brandId: f.brandId }, query: { period: '30d' } }),
      async handle({ params, query }, context) {
        await requireKnownBrand(d, params.brandId);
        const { current, previous } = periodWindows(context.clock.now(), query.period);
        const [cur, prev, types, streaks] = await Promise.all([
          windowTotals(d, params.brandId, current),
          windowTotals(d, params.brandId, previous),
          eventTypeActivity(d, params.brandId, current),
          reads.readStreakTotals(params.brandId, current),
        ]);
        const sample = cur.acceptedEvents + cur.redemptions;
        return {
          brandId: params.brandId,
          current: totalsView(cur),
          previous: totalsView(prev),
          growth: growthView(cur, prev),
          streaks: { members: streaks.streakMembers, longestCurrent: streaks.longestCurrent },
          topEventTypes: types.slice(0, 10).map((t) => eventTypeView(t, cur.acceptedEvents)),
          basis: basisOf(
            current,
            query.period,
            sample,
            sample === 0 ? 'No accepted event and no redemption at this brand in the period' : undefined,
          ),
        };
      },
    }),

    defineAgentTool({
      name: 'get_brand_dashboard',
      method: 'get',
      path: '/analytics/brands/:brandId/dashboard',
      summary: "A brand's dashboard over any window: the brand portal's numbers (key acting for the brand)",
      description:
        "Exactly what the brand portal's dashboard shows, for a brand the key acts for, over `from`..`to` (ISO 8601) or the `days` (default 30) ending now: members (all, new, active in the last day, week and month before `to`), events accepted and refused by reason, pts issued, perk redemptions and pts spent, daily and weekly series, top event types and perks, token purchases fulfilled and relayer gas paid in the window, and the all-time pts leaderboard's top 10. 403 for a brand the key does not act for; 400 for a bad or longer than 366-day window.",
      access: 'key',
      request: { params: brandParams, query: brandAnalyticsQuerySchema },
      result: brandAnalyticsSchema,
      example: (f) => ({ params: { brandId: f.brandId }, query: { days: 30 } }),
      async handle({ params, query }, context) {
        requireBrandAuthority(context.principal, params.brandId, 'Reading a brand dashboard');
        await requireKnownBrand(d, params.brandId);
        const read = () =>
          d.analyticsReads.readBrandAnalytics(d, {
            brandId: params.brandId,
            ...analyticsWindowOf(query, context.clock.now()),
          });
        // Kept briefly, after the key's authority is checked: agents polling a dashboard share one computation
        // (docs/agent-api.md, "Freshness"); `window.to` says when it was computed. The portal's is never kept.
        const seconds = Math.min(d.settings.answerMaxAgeSeconds, BRAND_DASHBOARD_MAX_AGE_SECONDS);
        if (seconds === 0) return read();
        return d.agentAnswers.get(answerKey('get_brand_dashboard', { brandId: params.brandId, query }), seconds, read);
      },
    }),

    defineAgentTool({
      name: 'get_brand_event_analytics',
      method: 'get',
      path: '/analytics/brands/:brandId/events',
      summary: "Per event type: a brand's accepted and rejected events, members and pts",
      description:
        "For each event type of the brand (every configured rule, plus types seen in the period without a rule): the rule (eventId, reward, cooldown, max claims per member, active; null when none), accepted and rejected events, acceptance rate in %, distinct members, pts issued and share of the brand's accepted events, over the period (7d, 30d default, 90d); previous-window accepted count and growth in %. Most accepted first. 404 for an unknown brand.",
      access: 'public',
      cached: true,
      request: { params: brandParams, query: z.object({ period: periodQuery('30d') }) },
      result: z.object({
        brandId: z.string(),
        eventTypes: z.array(
          eventTypeSchema.extend({
            acceptancePercent: z.number().nullable(),
            previousAccepted: z.number().int(),
            growthPercent: z.number().nullable(),
            rule: z
              .object({
                eventId: z.string(),
                rewardAmount: amount,
                cooldownHours: z.number(),
                maxClaimsPerUser: z.number().int(),
                active: z.boolean(),
              })
              .nullable(),
          }),
        ),
        basis,
      }),
      example: (f) => ({ params: { brandId: f.brandId }, query: { period: '30d' } }),
      async handle({ params, query }, context) {
        await requireKnownBrand(d, params.brandId);
        const { current, previous } = periodWindows(context.clock.now(), query.period);
        const [cur, prev, rules] = await Promise.all([
          eventTypeActivity(d, params.brandId, current),
          eventTypeActivity(d, params.brandId, previous),
          reads.readBrandRules([params.brandId]),
        ]);
        const accepted = cur.reduce((s, t) => s + t.accepted, 0);
        const byType = new Map(cur.map((t) => [t.eventType, t]));
        const prevByType = new Map(prev.map((t) => [t.eventType, t.accepted]));
        const ruleByType = new Map((rules.get(params.brandId) ?? []).map((r) => [r.eventType, r]));
        const types = [...new Set([...ruleByType.keys(), ...byType.keys()])];
        const eventTypes = types
          .map((eventType) => {
            const t = byType.get(eventType) ?? { eventType, accepted: 0, rejected: 0, members: 0, ptsIssued: 0n };
            const rule = ruleByType.get(eventType);
            const before = prevByType.get(eventType) ?? 0;
            return {
              ...eventTypeView(t, accepted),
              acceptancePercent: percentOf(t.accepted, t.accepted + t.rejected),
              previousAccepted: before,
              growthPercent: growthPercent(t.accepted, before),
              rule: rule
                ? {
                    eventId: rule.eventId,
                    rewardAmount: rule.rewardAmount.toString(),
                    cooldownHours: rule.cooldownHours,
                    maxClaimsPerUser: rule.maxClaimsPerUser,
                    active: rule.active,
                  }
                : null,
            };
          })
          .sort((a, b) => b.accepted - a.accepted || a.eventType.localeCompare(b.eventType));
        const events = cur.reduce((s, t) => s + t.accepted + t.rejected, 0);
        return {
          brandId: params.brandId,
          eventTypes,
          basis: basisOf(
            current,
            query.period,
            events,
            events === 0 ? 'No event at this brand in the period' : undefined,
          ),
        };
      },
    }),

    defineAgentTool({
      name: 'get_brand_perk_analytics',
      method: 'get',
      path: '/analytics/brands/:brandId/perks',
      summary: "A brand's perks: redemptions, pts redeemed, redeemers and supply",
      description:
        "Every perk of the brand with its cost, active flag, redemptions (pending or confirmed) all time, in the last 7 and 30 days, pts redeemed and distinct redeemers all time, failed attempts, supply (max, -1 = unlimited; remaining, null when unlimited) and sell-through in % (sold ÷ max supply, null when unlimited); brand totals and the share of the brand's all-time members who redeemed. Most redeemed first. 404 for an unknown brand; a brand without perks answers an empty list with a note.",
      access: 'public',
      cached: true,
      request: { params: brandParams },
      result: z.object({
        brandId: z.string(),
        totals: z.object({
          perks: z.number().int(),
          activePerks: z.number().int(),
          redemptions: z.number().int(),
          ptsRedeemed: amount,
          redeemers: z.number().int(),
          members: z.number().int(),
          redeemerPercent: z.number().nullable(),
        }),
        perks: z.array(
          z.object({
            perkId: z.string(),
            name: z.string(),
            category: z.string(),
            cost: amount,
            active: z.boolean(),
            redemptions: z.number().int(),
            redemptions7d: z.number().int(),
            redemptions30d: z.number().int(),
            ptsRedeemed: amount,
            redeemers: z.number().int(),
            failed: z.number().int(),
            supply: z.object({ max: limitTextSchema, remaining: amount.nullable() }),
            sellThroughPercent: z.number().nullable(),
          }),
        ),
        basis,
      }),
      example: (f) => ({ params: { brandId: f.brandId } }),
      async handle({ params }, context) {
        await requireKnownBrand(d, params.brandId);
        const now = context.clock.now();
        const allTime: TimeWindow = { from: new Date(0), to: now, days: 0 };
        const [perks, totals, all] = await Promise.all([
          reads.readPerkActivity(params.brandId, now),
          reads.readPerkRedemptionTotals(params.brandId, now),
          windowTotals(d, params.brandId, allTime),
        ]);
        const view = perks
          .map((p) => {
            const t = totals.get(p.perkId) ?? { ptsRedeemed: 0n, redeemers: 0, failed: 0 };
            const remaining = p.maxSupply === null ? null : p.maxSupply > p.sold ? p.maxSupply - p.sold : 0n;
            return {
              perkId: p.perkId,
              name: p.name,
              category: p.category,
              cost: p.cost.toString(),
              active: p.active,
              redemptions: Number(p.sold),
              redemptions7d: p.last7,
              redemptions30d: p.last30,
              ptsRedeemed: t.ptsRedeemed.toString(),
              redeemers: t.redeemers,
              failed: t.failed,
              supply: {
                max: limitTextOut(p.maxSupply),
                remaining: remaining === null ? null : remaining.toString(),
              },
              sellThroughPercent: p.maxSupply === null ? null : percentOf(Number(p.sold), Number(p.maxSupply)),
            };
          })
          .sort((a, b) => b.redemptions - a.redemptions || Number(a.perkId) - Number(b.perkId));
        const redemptions = view.reduce((s, p) => s + p.redemptions, 0);
        let note: string | undefined;
        if (view.length === 0) note = 'The brand has no perk';
        else if (redemptions === 0) note = 'No perk of the brand was ever redeemed';
        return {
          brandId: params.brandId,
          totals: {
            perks: view.length,
            activePerks: view.filter((p) => p.active).length,
            redemptions,
            ptsRedeemed: all.ptsRedeemed.toString(),
            redeemers: all.redeemers,
            members: all.members,
            redeemerPercent: percentOf(all.activeRedeemers, all.members),
          },
          perks: view,
          basis: { ...basisOf(allTime, 'all_time', redemptions, note), from: null },
        };
      },
    }),

    defineAgentTool({
      name: 'get_brand_health',
      method: 'get',
      path: '/analytics/brands/:brandId/health',
      summary: "A brand's health score 0–100, grade, strengths, weaknesses and recommendations",
      description:
        'Health of a brand over the last 30 days (and the 30 before): five components of 20 points — engagement (events per active member, full at 4), retention (share of the previous window’s members active again), growth (member change, 10 = flat), redemption (share of members who redeemed, full at 20 %), program (active rule 5, available perk 5, members on a 2+ streak up to 10 at 25 %). Score = rounded sum, grade A ≥ 90, B ≥ 80, C ≥ 70, D ≥ 60, else F. Strengths: components ≥ 75 % of their max; weaknesses (< 40 %) each come with a recommendation. The inputs are returned. 404 for an unknown brand; a brand without members scores only its program.',
      access: 'public',
      cached: true,
      request: { params: brandParams },
      result: healthSchema,
      example: (f) => ({ params: { brandId: f.brandId } }),
      async handle({ params }, context) {
        await requireKnownBrand(d, params.brandId);
        const { current, inputs, ...report } = await brandHealth(params.brandId, context.clock.now());
        return {
          brandId: params.brandId,
          ...report,
          inputs,
          basis: basisOf(
            current,
            HEALTH_PERIOD,
            inputs.members,
            inputs.members === 0
              ? 'No active member in the last 30 days: only the program component can score'
              : undefined,
          ),
        };
      },
    }),
  ];
}

function eventTypeView(
  t: { eventType: string; accepted: number; rejected: number; members: number; ptsIssued: bigint },
  accepted: number,
) {
  return {
    eventType: t.eventType,
    accepted: t.accepted,
    rejected: t.rejected,
    members: t.members,
    ptsIssued: t.ptsIssued.toString(),
    sharePercent: percentOf(t.accepted, accepted),
  };
}

/** Comparisons (spec 4.1 `/compare/*`), rankings and network trends; all public aggregates. */
function compareAndTrendTools(d: AgentToolDeps): AgentTool[] {
  const reads = d.analyticsReads;
  return [
    defineAgentTool({
      name: 'compare_brands',
      method: 'get',
      path: '/compare/brands',
      summary: 'Side-by-side activity of 2 to 5 brands over 7, 30 or 90 days',
      description:
        'For each brand of `brandIds` (2 to 5, comma-separated): the totals of get_brand_analytics over the period (7d, 30d default, 90d) and member growth against the previous window; then per metric (members, acceptedEvents, ptsIssued, redemptions, eventsPerMember, redemptionRatePercent, memberGrowthPercent) the leading brand (null when all are 0 or null; ties go to the first listed). 404 names any unknown brand.',
      access: 'public',
      cached: true,
      request: {
        query: z.object({ brandIds: brandIdList(COMPARE_BRANDS_MIN, COMPARE_BRANDS_MAX), period: periodQuery('30d') }),
      },
      result: z.object({
        brands: z.array(
          z.object({
            brandId: z.string(),
            name: z.string(),
            totals: totalsSchema,
            memberGrowthPercent: z.number().nullable(),
          }),
        ),
        leaders: z.record(z.string(), z.string().nullable()),
        basis,
      }),
      example: (f) => ({ query: { brandIds: `${f.brandId},${f.otherBrandId}`, period: '30d' } }),
      async handle({ query }, context) {
        const names = await requireBrands(d, query.brandIds);
        const { current, previous } = periodWindows(context.clock.now(), query.period);
        const brands = await Promise.all(
          query.brandIds.map(async (brandId) => {
            const [cur, prev] = await Promise.all([
              windowTotals(d, brandId, current),
              windowTotals(d, brandId, previous),
            ]);
            return {
              brandId,
              name: names.get(brandId) ?? brandId,
              totals: totalsView(cur),
              memberGrowthPercent: growthPercent(cur.members, prev.members),
            };
          }),
        );
        const metric = (pick: (b: (typeof brands)[number]) => number | null) => {
          let best: { brandId: string; value: number } | null = null;
          for (const b of brands) {
            const value = pick(b);
            if (value !== null && value > 0 && (best === null || value > best.value))
              best = { brandId: b.brandId, value };
          }
          return best?.brandId ?? null;
        };
        const sample = brands.reduce((s, b) => s + b.totals.acceptedEvents + b.totals.redemptions, 0);
        return {
          brands,
          leaders: {
            members: metric((b) => b.totals.members),
            acceptedEvents: metric((b) => b.totals.acceptedEvents),
            ptsIssued: metric((b) => Number(b.totals.ptsIssued)),
            redemptions: metric((b) => b.totals.redemptions),
            eventsPerMember: metric((b) => b.totals.eventsPerMember),
            redemptionRatePercent: metric((b) => b.totals.redemptionRatePercent),
            memberGrowthPercent: metric((b) => b.memberGrowthPercent),
          },
          basis: basisOf(
            current,
            query.period,
            sample,
            sample === 0 ? 'No activity at these brands in the period' : undefined,
          ),
        };
      },
    }),

    defineAgentTool({
      name: 'compare_cashback',
      method: 'get',
      path: '/compare/cashback',
      summary: 'What a purchase of N USD earns at each brand, as pts and as % cashback',
      description:
        "For a purchase of `purchaseAmount` USD (up to 2 decimals, > 0) at each brand of `brandIds` (2 to 10, comma-separated) and/or of `category` (retail, gaming, dining, travel; with both, the listed brands of that category): the brand's best active purchase rule (event type `earn` or containing purchase, order or checkout), its reward in pts, that reward's USD value at the purchase rate (1 USD = 1000 pts) and cashbackPercent = 100 × reward ÷ (purchaseAmount × 1000). Rewards are flat per event, so the percent falls as the purchase grows. Brands without a purchase rule are listed last with nulls. Also the purchase rule's accepted events in the last 30 days (how often it really pays). Highest reward first. One of brandIds or category is required; 404 names unknown brands.",
      access: 'public',
      cached: true,
      request: {
        query: z
          .object({
            brandIds: brandIdList(COMPARE_BRANDS_MIN, CASHBACK_BRANDS_MAX).optional(),
            category: category.optional(),
            purchaseAmount: usdCents('purchaseAmount'),
          })
          .refine((q) => q.brandIds !== undefined || q.category !== undefined, {
            message: 'Give brandIds (2 to 10, comma-separated) or category (or both)',
            path: ['brandIds'],
          }),
      },
      result: z.object({
        purchaseAmountUsd: z.string(),
        ptsPerUsd: z.number().int(),
        category: z.string().nullable(),
        brands: z.array(
          z.object({
            brandId: z.string(),
            name: z.string(),
            eventType: z.string().nullable(),
            eventId: z.string().nullable(),
            rewardPts: amount.nullable(),
            rewardUsd: z.string().nullable(),
            cashbackPercent: z.number().nullable(),
            maxClaimsPerUser: z.number().int().nullable(),
            cooldownHours: z.number().nullable(),
            acceptedLast30d: z.number().int(),
          }),
        ),
        basis,
      }),
      example: (f) => ({ query: { brandIds: `${f.brandId},${f.otherBrandId}`, purchaseAmount: '25' } }),
      async handle({ query }, context) {
        const cents = query.purchaseAmount;
        let brandIds: string[];
        let names: Map<string, string>;
        if (query.brandIds) {
          names = await requireBrands(d, query.brandIds);
          brandIds = query.brandIds;
          if (query.category) {
            const inCategory = new Set((await brandsOfCategory(d, query.category)).map((b) => b.brandId));
            brandIds = brandIds.filter((id) => inCategory.has(id));
          }
        } else {
          const listed = await brandsOfCategory(d, query.category);
          brandIds = listed.map((b) => b.brandId);
          names = new Map(listed.map((b) => [b.brandId, b.name]));
        }
        const { current } = periodWindows(context.clock.now(), HEALTH_PERIOD);
        const [rules, types] = await Promise.all([
          reads.readBrandRules(brandIds),
          Promise.all(brandIds.map(async (id) => [id, await eventTypeActivity(d, id, current)] as const)),
        ]);
        const accepted = new Map(types.map(([id, list]) => [id, new Map(list.map((t) => [t.eventType, t.accepted]))]));
        const brands = brandIds
          .map((brandId) => {
            const best = bestPurchaseRule(rules.get(brandId) ?? []);
            const reward = best ? purchaseReward(best.rewardAmount, cents) : undefined;
            return {
              brandId,
              name: names.get(brandId) ?? brandId,
              eventType: best?.eventType ?? null,
              eventId: best?.eventId ?? null,
              rewardPts: reward?.rewardPts ?? null,
              rewardUsd: reward?.rewardUsd ?? null,
              cashbackPercent: reward?.cashbackPercent ?? null,
              maxClaimsPerUser: best?.maxClaimsPerUser ?? null,
              cooldownHours: best?.cooldownHours ?? null,
              acceptedLast30d: best ? (accepted.get(brandId)?.get(best.eventType) ?? 0) : 0,
            };
          })
          .sort((a, b) => {
            const ra = a.rewardPts === null ? -1n : BigInt(a.rewardPts);
            const rb = b.rewardPts === null ? -1n : BigInt(b.rewardPts);
            return rb > ra ? 1 : rb < ra ? -1 : a.brandId.localeCompare(b.brandId);
          });
        const sample = brands.reduce((s, b) => s + b.acceptedLast30d, 0);
        let note: string | undefined;
        if (brands.length === 0)
          note = 'No brand matches (the category has no brand, or none of the listed brands is in it)';
        else if (brands.every((b) => b.rewardPts === null)) note = 'None of these brands has an active purchase rule';
        return {
          purchaseAmountUsd: formatCents(cents),
          ptsPerUsd: PTS_PER_USD,
          category: query.category ?? null,
          brands,
          basis: basisOf(current, HEALTH_PERIOD, sample, note),
        };
      },
    }),

    defineAgentTool({
      name: 'get_brand_rankings',
      method: 'get',
      path: '/brands/rankings',
      summary: 'Top brands (optionally of one category) by active members over the last 30 days',
      description:
        'Brands ranked by distinct active members in the last 30 days, then accepted events, then pts issued, then Brand ID; `category` (retail, gaming, dining, travel) keeps brands of that category; `limit` 1–10 (default 10). Each entry: rank, brandId, name, category, members, acceptedEvents, ptsIssued, memberGrowthPercent against the 30 days before. Brands without activity rank last with zeros. An empty list has a note.',
      access: 'public',
      cached: true,
      request: { query: z.object({ category: category.optional(), limit: limitQuery(RANKINGS_MAX, 10) }) },
      result: z.object({
        rankings: z.array(
          z.object({
            rank: z.number().int(),
            brandId: z.string(),
            name: z.string(),
            category: z.string().nullable(),
            members: z.number().int(),
            acceptedEvents: z.number().int(),
            ptsIssued: amount,
            memberGrowthPercent: z.number().nullable(),
          }),
        ),
        category: z.string().nullable(),
        totalBrands: z.number().int(),
        basis,
      }),
      example: () => ({ query: { limit: 5 } }),
      async handle({ query }, context) {
        const { current, previous } = periodWindows(context.clock.now(), HEALTH_PERIOD);
        const [brands, cur, prev] = await Promise.all([
          brandsOfCategory(d, query.category),
          reads.readActivityByBrand(current),
          reads.readActivityByBrand(previous),
        ]);
        const none = { events: 0, members: 0, ptsIssued: 0n };
        const ranked = brands
          .map((b) => ({
            brand: b,
            a: { brandId: b.brandId, ...(cur.get(b.brandId) ?? none) },
            members0: prev.get(b.brandId)?.members ?? 0,
          }))
          .sort((x, y) => compareBrandActivity(x.a, y.a))
          .slice(0, query.limit);
        const sample = ranked.reduce((s, r) => s + r.a.members, 0);
        return {
          rankings: ranked.map((r, i) => ({
            rank: i + 1,
            brandId: r.brand.brandId,
            name: r.brand.name,
            category: r.brand.category,
            members: r.a.members,
            acceptedEvents: r.a.events,
            ptsIssued: r.a.ptsIssued.toString(),
            memberGrowthPercent: growthPercent(r.a.members, r.members0),
          })),
          category: query.category ?? null,
          totalBrands: brands.length,
          basis: basisOf(
            current,
            HEALTH_PERIOD,
            sample,
            brands.length === 0
              ? query.category
                ? `No brand of category ${query.category}`
                : 'No brand on the network'
              : sample === 0
                ? 'No active member at these brands in the last 30 days: the order is by Brand ID'
                : undefined,
          ),
        };
      },
    }),

    defineAgentTool({
      name: 'get_network_flows',
      method: 'get',
      path: '/network/flows',
      summary: 'Cross-brand member flows: members active at brand A, then at brand B',
      description:
        "Over the period (7d, 30d default, 90d): each member's brands ordered by the member's first accepted event at each (ties by Brand ID); every consecutive pair A → B counts the member once for that flow. Answer: the busiest 50 flows (members, share of multi-brand members in %), members active in the period, members active at 2+ brands and their share. Agent identities excluded. No flows (an empty list with a note) when no member used two brands.",
      access: 'public',
      cached: true,
      request: { query: z.object({ period: periodQuery('30d') }) },
      result: z.object({
        members: z.number().int(),
        multiBrandMembers: z.number().int(),
        multiBrandPercent: z.number().nullable(),
        flows: z.array(
          z.object({
            from: z.object({ brandId: z.string(), name: z.string() }),
            to: z.object({ brandId: z.string(), name: z.string() }),
            members: z.number().int(),
            sharePercent: z.number().nullable(),
          }),
        ),
        basis,
      }),
      example: () => ({ query: { period: '30d' } }),
      async handle({ query }, context) {
        const { current } = periodWindows(context.clock.now(), query.period);
        const flows = await reads.readMemberFlows(current);
        const top = flows.flows.slice(0, FLOWS_MAX);
        const names = await reads.readBrandNames([...new Set(top.flatMap((f) => [f.from, f.to]))]);
        const named = (brandId: string) => ({ brandId, name: names.get(brandId) ?? brandId });
        return {
          members: flows.members,
          multiBrandMembers: flows.multiBrandMembers,
          multiBrandPercent: percentOf(flows.multiBrandMembers, flows.members),
          flows: top.map((f) => ({
            from: named(f.from),
            to: named(f.to),
            members: f.members,
            sharePercent: percentOf(f.members, flows.multiBrandMembers),
          })),
          basis: basisOf(
            current,
            query.period,
            flows.members,
            top.length === 0 ? 'No member was active at two brands in the period' : undefined,
          ),
        };
      },
    }),

    defineAgentTool({
      name: 'get_trending',
      method: 'get',
      path: '/network/trending',
      summary: 'Brands, perks and event types growing fastest against the previous period',
      description:
        'Compares the period (7d default, 30d, 90d) with the window of the same length before it: brands by accepted events, perks by redemptions (pending or confirmed), event types by accepted events network-wide. Each item: current, previous, growthPercent (null when previous is 0) and momentum = (current − previous) ÷ (previous + 1). Lists keep items that grew (momentum > 0), highest momentum first, then current count, then id; `limit` 1–50 (default 10) per list. Empty lists with a note when nothing grew.',
      access: 'public',
      cached: true,
      request: { query: z.object({ period: periodQuery('7d'), limit: limitQuery(TRENDING_MAX, 10) }) },
      result: z.object({
        brands: z.array(trendItem),
        perks: z.array(trendItem),
        eventTypes: z.array(trendItem),
        basis: basis.extend({ previousFrom: z.string() }),
      }),
      example: () => ({ query: { period: '7d', limit: 10 } }),
      async handle({ query }, context) {
        const { current, previous } = periodWindows(context.clock.now(), query.period);
        const counts = await reads.readTrendCounts(previous, current);
        const rank = (items: TrendCounts[]) =>
          items
            .map((c) => ({ ...c, momentum: momentum(c.current, c.previous) }))
            .filter((c) => c.momentum > 0)
            .sort((a, b) => b.momentum - a.momentum || b.current - a.current || a.id.localeCompare(b.id))
            .slice(0, query.limit);
        const brands = rank(counts.brands);
        const perks = rank(counts.perks);
        const eventTypes = rank(counts.eventTypes);
        const [brandNames, perkNames] = await Promise.all([
          reads.readBrandNames([...new Set([...brands, ...perks].map((b) => b.brandId))]),
          reads.readPerkNames(perks.map((p) => p.id)),
        ]);
        const view = (c: TrendCounts & { momentum: number }, name: string, brandId: string | null) => ({
          id: c.id,
          name,
          brandId,
          current: c.current,
          previous: c.previous,
          growthPercent: growthPercent(c.current, c.previous),
          momentum: c.momentum,
        });
        const sample =
          counts.brands.reduce((s, c) => s + c.current + c.previous, 0) +
          counts.perks.reduce((s, c) => s + c.current + c.previous, 0);
        const grew = brands.length + perks.length + eventTypes.length;
        return {
          brands: brands.map((c) => view(c, brandNames.get(c.id) ?? c.id, c.id)),
          perks: perks.map((c) => view(c, perkNames.get(c.id) ?? c.id, c.brandId)),
          eventTypes: eventTypes.map((c) => view(c, c.id, null)),
          basis: {
            ...basisOf(
              current,
              query.period,
              sample,
              grew === 0 ? 'Nothing grew against the previous period' : undefined,
            ),
            previousFrom: previous.from.toISOString(),
          },
        };
      },
    }),
  ];
}

/**
 * The analytics, comparison and trend tools (spec 4.1). `get_brand_rankings` (`/brands/rankings`) must be
 * mounted before discovery's `/brands/:brandId`: agent-tools.ts puts this list first.
 */
export function analyticsTools(d: AgentToolDeps): AgentTool[] {
  return [...compareAndTrendTools(d), ...analyticsAreaTools(d)];
}
