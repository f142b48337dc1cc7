import { cleanString } from '@pts/shared';
import { z } from 'zod';
import { formatCents } from '../../modules/payments/payment-amounts.ts';
import { type AgentTool, defineAgentTool } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';
import { type Period, PTS_PER_USD, periodWindows } from '../analytics/formulas.ts';
import { poolPeers, projectRoi } from '../growth/roi.ts';
import { usdCents } from './analytics.tools.ts';
import { BRAND_CATEGORIES } from './discovery.tools.ts';
import { onboardBody } from './onboarding.tools.ts';

// Growth (spec 4.1 `/growth/*`, public): the ROI estimate from peer brands' real activity and the lead form
// (docs/agent-api/growth.md).

/** The ROI estimate reads the last 30 days of the peers. */
const ROI_PERIOD: Period = '30d';
/** Bounds of the ROI body (docs/agent-api/growth.md). */
export const ROI_MAX_MONTHLY_CUSTOMERS = 100_000_000;
export const ROI_MAX_ORDER_USD = 1_000_000;
/** A second request for the same business from the same contact within this window is the same lead. */
export const LEAD_DEDUPE_HOURS = 24;

const text = (max: number) =>
  cleanString(z.string().min(1, 'must not be empty').max(max, `must be at most ${max} characters`));
const industry = text(100).describe('The business’s industry; retail, gaming, dining or travel match peer brands');
const amount = z.string().regex(/^\d+$/).describe('Whole pts, as a decimal string (exact)');

/** The industry's brand category, or null when it names none. */
function categoryOf(value: string): (typeof BRAND_CATEGORIES)[number] | null {
  const lower = value.toLowerCase();
  return BRAND_CATEGORIES.find((c) => c === lower) ?? null;
}

const roiBody = z.object({
  industry,
  monthlyCustomers: z
    .number({ message: 'monthlyCustomers must be a number' })
    .int('monthlyCustomers must be a whole number')
    .min(1, 'monthlyCustomers must be at least 1')
    .max(ROI_MAX_MONTHLY_CUSTOMERS, `monthlyCustomers must be at most ${ROI_MAX_MONTHLY_CUSTOMERS}`),
  averageOrderValue: z
    .number({ message: 'averageOrderValue must be a number (USD)' })
    .max(ROI_MAX_ORDER_USD, `averageOrderValue must be at most ${ROI_MAX_ORDER_USD} USD`)
    .transform(String)
    .pipe(usdCents('averageOrderValue')),
});

const leadBody = onboardBody
  .pick({ businessName: true, contactEmail: true, website: true })
  .extend({ industry })
  .transform((body) => ({ ...body, contactEmail: body.contactEmail.toLowerCase() }));

const roiResult = z.object({
  industry: z.string(),
  category: z.enum(BRAND_CATEGORIES).nullable().describe('The brand category the industry matched; null for none'),
  input: z.object({
    monthlyCustomers: z.number().int(),
    averageOrderValueUsd: z.string(),
    monthlySalesUsd: z.string(),
  }),
  peers: z.object({
    brandsInCategory: z.number().int(),
    activeBrands: z.number().int().describe('Peers with an active member in the period: the sample'),
    members: z.number().int(),
    acceptedEvents: z.number().int(),
    ptsIssued: amount,
    redeemers: z.number().int(),
    ptsRedeemed: amount,
  }),
  rates: z
    .object({
      eventsPerMember: z.number(),
      ptsIssuedPerMember: z.number(),
      redemptionRatePercent: z.number().nullable(),
      ptsRedeemedPerMember: z.number(),
    })
    .nullable(),
  projection: z
    .object({
      members: z.number().int(),
      acceptedEvents: z.number().int(),
      ptsIssued: amount,
      rewardCostUsd: z.string(),
      redeemers: z.number().int(),
      ptsRedeemed: amount,
      redeemedValueUsd: z.string(),
      rewardCostPercentOfSales: z.number().nullable(),
      breakEven: z.object({
        extraOrdersPerMonth: z.number().int(),
        salesUpliftPercent: z.number().nullable(),
      }),
    })
    .nullable()
    .describe('Monthly; null when there is no peer data'),
  ptsPerUsd: z.number().int(),
  assumptions: z.array(z.string()),
  basis: z.object({
    period: z.string(),
    from: z.string(),
    to: z.string(),
    sampleSize: z.number().int().describe('Active members of the peer brands in the period'),
    note: z.string().optional(),
  }),
});

const leadResult = z.object({
  leadId: z.string(),
  duplicate: z.boolean(),
  receivedAt: z.string(),
  category: z.enum(BRAND_CATEGORIES).nullable(),
  brandsInCategory: z.number().int().nullable(),
  next: z.string(),
});

type GrowthToolDeps = Pick<AgentToolDeps, 'growth'>;
type RoiBody = z.output<typeof roiBody>;
type RoiPool = ReturnType<typeof poolPeers>;
type BrandCategory = (typeof BRAND_CATEGORIES)[number];

/** The growth tools (spec 4.1): `estimate_roi` and `request_growth_info`, both public. */
export function growthTools(d: GrowthToolDeps): AgentTool[] {
  return [estimateRoiTool(d), requestGrowthInfoTool(d)];
}

/** `estimate_roi`: what a program would cost and need to pay back, from the category's peers. */
function estimateRoiTool({ growth }: GrowthToolDeps): AgentTool {
  return defineAgentTool({
    name: 'estimate_roi',
    method: 'post',
    path: '/growth/estimate-roi',
    summary: "What a loyalty program would cost and need to pay back, from peer brands' real last 30 days",
    description:
      "Body: `industry` (retail, gaming, dining or travel match the network's brands of that category; anything else has no peers), `monthlyCustomers` (whole number 1–100 000 000), `averageOrderValue` (USD > 0, up to 2 decimals, at most 1 000 000). Pools the category's brands with an active member in the last 30 days: events, pts issued, redeemers and pts redeemed per active member; scales them to monthlyCustomers (every customer joining: an upper bound). Answer: monthly pts issued and their cost in USD at 1000 pts = 1 USD, expected redeemers and pts redeemed, reward cost as % of monthly sales, and break-even (extra orders a month, sales uplift %). Without peer activity `rates` and `projection` are null, `basis.sampleSize` 0 and a note says why — no industry averages are invented.",
    access: 'public',
    request: { body: roiBody },
    result: roiResult,
    example: () => ({ body: { industry: 'retail', monthlyCustomers: 500, averageOrderValue: 42.5 } }),
    async handle({ body }, context) {
      const { current } = periodWindows(context.clock.now(), ROI_PERIOD);
      const category = categoryOf(body.industry);
      const peers = category ? await growth.readCategoryActivity(category, current) : [];
      return answerRoi(body, category, poolPeers(peers), current);
    },
  });
}

/** The ROI answer for a body over its category's pooled peers in the window `current`. */
function answerRoi(
  body: RoiBody,
  category: BrandCategory | null,
  pool: RoiPool,
  current: { from: Date; to: Date },
): z.infer<typeof roiResult> {
  const estimate = projectRoi(pool, {
    monthlyCustomers: body.monthlyCustomers,
    averageOrderCents: body.averageOrderValue,
  });
  const note = roiNote(body.industry, category, pool);
  return {
    industry: body.industry,
    category,
    input: {
      monthlyCustomers: body.monthlyCustomers,
      averageOrderValueUsd: formatCents(body.averageOrderValue),
      monthlySalesUsd: estimate.monthlySalesUsd,
    },
    peers: { ...pool, ptsIssued: pool.ptsIssued.toString(), ptsRedeemed: pool.ptsRedeemed.toString() },
    rates: estimate.rates,
    projection: estimate.projection,
    ptsPerUsd: PTS_PER_USD,
    assumptions: [
      'Every monthly customer joins the program (an upper bound on cost)',
      "Members behave like the peers' active members over the last 30 days",
      'Reward cost is the pts issued, valued at the purchase rate of 1000 pts = 1 USD',
    ],
    basis: {
      period: ROI_PERIOD,
      from: current.from.toISOString(),
      to: current.to.toISOString(),
      sampleSize: pool.members,
      ...(note ? { note } : {}),
    },
  };
}

/** Why there is no estimate (no category, no brand of it, no active member), or undefined when there is one. */
function roiNote(industry: string, category: BrandCategory | null, pool: RoiPool): string | undefined {
  if (!category) {
    return `Industry "${industry}" is not a brand category of this network (${BRAND_CATEGORIES.join(', ')}): no peer brands to learn from, so no estimate`;
  }
  if (pool.brandsInCategory === 0) return `No brand of category ${category} yet: no peer data, so no estimate`;
  if (pool.members === 0) {
    return `The ${pool.brandsInCategory} ${category} brand(s) had no active member in the last 30 days: no estimate`;
  }
  return undefined;
}

/** `request_growth_info`: a lead the operator contacts, deduplicated per contact and business for a day. */
function requestGrowthInfoTool({ growth }: GrowthToolDeps): AgentTool {
  return defineAgentTool({
    name: 'request_growth_info',
    method: 'post',
    path: '/growth/request-info',
    summary: 'Ask the operator to contact a business about joining the network',
    description:
      "Body: `businessName` (1–200 characters), `contactEmail` (an email address), `website` (http(s) URL of a site with a domain name), `industry` (1–100 characters). Stores a lead that the network operator reads (`GET /admin/growth-leads`, docs/agent-api/growth.md) and contacts by email. The same contact asking for the same business again within 24 hours is the same lead (`duplicate: true`, nothing new stored). The answer never echoes the contact details; it says how many brands of the industry's category the network has.",
    access: 'public',
    request: { body: leadBody },
    result: leadResult,
    example: () => ({
      body: {
        businessName: 'Corner Bakery',
        contactEmail: 'owner@corner-bakery.example.com',
        website: 'https://corner-bakery.example.com',
        industry: 'dining',
      },
    }),
    async handle({ body }, context) {
      const now = context.clock.now();
      const { lead, duplicate } = await growth.recordGrowthLead(body, now, LEAD_DEDUPE_HOURS * 3_600_000);
      const category = categoryOf(body.industry);
      const brandsInCategory = category ? await growth.countBrandsInCategory(category) : null;
      context.logger.info({ leadId: lead.leadId, duplicate }, 'growth lead received');
      return {
        leadId: lead.leadId,
        duplicate,
        receivedAt: lead.createdAt.toISOString(),
        category,
        brandsInCategory,
        next: duplicate
          ? `Already received within the last ${LEAD_DEDUPE_HOURS} hours; the operator will reply to the contact email given`
          : 'The network operator reviews new leads and replies to the contact email given',
      };
    },
  });
}
