import type { PeerActivity } from '../../modules/analytics/analytics.repository.ts';
import { formatCents, PTS_PER_CENT } from '../../modules/payments/payment-amounts.ts';
import { cashbackPercent, percentOf, ptsToUsd, ratio } from '../analytics/formulas.ts';

/**
 * The ROI estimate (docs/agent-api/growth.md, "estimate_roi"): what the category's brands really did over
 * the last 30 days, pooled, scaled to the caller's monthly customers and order value. Pure, exact on pts
 * and cents (bigint); ratios are rounded for display only.
 */

export interface RoiInput {
  monthlyCustomers: number;
  averageOrderCents: bigint;
}

/** Pooled totals of the peers with at least one active member. */
export function poolPeers(peers: PeerActivity[]) {
  const active = peers.filter((p) => p.members > 0);
  return {
    brandsInCategory: peers.length,
    activeBrands: active.length,
    members: active.reduce((s, p) => s + p.members, 0),
    acceptedEvents: active.reduce((s, p) => s + p.acceptedEvents, 0),
    ptsIssued: active.reduce((s, p) => s + p.ptsIssued, 0n),
    redeemers: active.reduce((s, p) => s + p.redeemers, 0),
    ptsRedeemed: active.reduce((s, p) => s + p.ptsRedeemed, 0n),
  };
}

export type PeerPool = ReturnType<typeof poolPeers>;

/** `a × b ÷ c` rounded up, for whole cents and orders (never under-states a cost). */
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

/**
 * Per member rates of the pool and the projection for `input`; null when the pool has no member.
 * - members = monthlyCustomers (every customer joins: an upper bound, stated in the answer);
 * - pts issued = ⌊monthlyCustomers × pool pts issued ÷ pool members⌋; events and redeemers likewise;
 * - reward cost = pts issued at the purchase rate (1000 pts = 1 USD), in USD cents rounded up;
 * - monthly sales = monthlyCustomers × averageOrderValue;
 * - reward cost as % of sales = 100 × pts issued ÷ pts the sales would buy;
 * - break-even: extra orders a month = ⌈reward cost ÷ averageOrderValue⌉, sales uplift % = 100 × that cost ÷ sales
 *   (2 decimals, rounded up).
 */
export function projectRoi(pool: PeerPool, input: RoiInput) {
  const salesCents = BigInt(input.monthlyCustomers) * input.averageOrderCents;
  const base = { monthlySalesUsd: formatCents(salesCents) };
  if (pool.members === 0) return { ...base, rates: null, projection: null };
  const customers = BigInt(input.monthlyCustomers);
  const members = BigInt(pool.members);
  const scale = (value: bigint) => (customers * value) / members;
  const ptsIssued = scale(pool.ptsIssued);
  const ptsRedeemed = scale(pool.ptsRedeemed);
  const costCents = ceilDiv(ptsIssued, PTS_PER_CENT);
  const extraOrders = costCents === 0n ? 0n : ceilDiv(costCents, input.averageOrderCents);
  return {
    ...base,
    rates: {
      eventsPerMember: ratio(pool.acceptedEvents, pool.members),
      ptsIssuedPerMember: ratio(Number(pool.ptsIssued), pool.members),
      redemptionRatePercent: percentOf(pool.redeemers, pool.members),
      ptsRedeemedPerMember: ratio(Number(pool.ptsRedeemed), pool.members),
    },
    projection: {
      members: input.monthlyCustomers,
      acceptedEvents: Number(scale(BigInt(pool.acceptedEvents))),
      ptsIssued: ptsIssued.toString(),
      rewardCostUsd: ptsToUsd(ptsIssued),
      redeemers: Number(scale(BigInt(pool.redeemers))),
      ptsRedeemed: ptsRedeemed.toString(),
      redeemedValueUsd: ptsToUsd(ptsRedeemed),
      rewardCostPercentOfSales: cashbackPercent(ptsIssued, salesCents),
      breakEven: {
        extraOrdersPerMonth: Number(extraOrders),
        salesUpliftPercent: salesCents > 0n ? Number(ceilDiv(costCents * 10000n, salesCents)) / 100 : null,
      },
    },
  };
}
