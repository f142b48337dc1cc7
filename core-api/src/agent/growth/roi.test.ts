import { describe, expect, it } from 'vitest';
import { poolPeers, projectRoi } from './roi.ts';

const peer = (members: number, events: number, issued: bigint, redeemers = 0, redeemed = 0n) => ({
  brandId: `0x${members}`,
  members,
  acceptedEvents: events,
  ptsIssued: issued,
  redeemers,
  ptsRedeemed: redeemed,
});

describe('poolPeers', () => {
  it('sums active peers only and counts every brand of the category', () => {
    expect(poolPeers([peer(2, 3, 300n, 1, 50n), peer(0, 0, 0n), peer(1, 1, 40n)])).toEqual({
      brandsInCategory: 3,
      activeBrands: 2,
      members: 3,
      acceptedEvents: 4,
      ptsIssued: 340n,
      redeemers: 1,
      ptsRedeemed: 50n,
    });
  });
});

describe('projectRoi', () => {
  // [pool members, pool pts, customers, order cents] → [pts issued, cost USD, % of sales, extra orders, uplift %]
  const table: [number, bigint, number, bigint, string, string, number | null, number, number | null][] = [
    [3, 340n, 300, 2000n, '34000', '34.000', 0.57, 2, 0.57],
    [3, 340n, 7, 99n, '793', '0.793', 11.44, 1, 11.55], // 79.3 → 80 cents; ⌈80 ÷ 99⌉; ⌈80 × 10⁴ ÷ 693⌉ ÷ 100
    [10, 0n, 1000, 500n, '0', '0.000', 0, 0, 0], // peers paid nothing: no cost, no break-even
    [1, 1n, 1, 1n, '1', '0.001', 10, 1, 100], // 1 pt = 0.1 cent → 1 cent on a 1-cent order
  ];
  it.each(table)(
    'pool %i members / %s pts, %i customers at %s cents',
    (m, pts, c, aov, issued, usd, pct, orders, uplift) => {
      const r = projectRoi(poolPeers([peer(m, m, pts)]), { monthlyCustomers: c, averageOrderCents: aov });
      expect(r.projection).toMatchObject({
        ptsIssued: issued,
        rewardCostUsd: usd,
        rewardCostPercentOfSales: pct,
        breakEven: { extraOrdersPerMonth: orders, salesUpliftPercent: uplift },
      });
    },
  );

  it('no active peer → no rates, no projection, sales still stated', () => {
    expect(projectRoi(poolPeers([peer(0, 0, 0n)]), { monthlyCustomers: 10, averageOrderCents: 1234n })).toEqual({
      monthlySalesUsd: '123.40',
      rates: null,
      projection: null,
    });
  });
});
