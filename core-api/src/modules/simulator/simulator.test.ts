import type { CreatedBrand } from '@pts/shared';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';

// The what-if simulator (issue 36 §3, docs/simulator.md) through the real app: its 400s, a proposal's answer,
// and the equality property — events made through the real event path (signed manual-event: cooldowns, max
// claims, a global cap, rate and fixed rules, a campaign, privileged sources, skip_cooldown, externalIds),
// then simulated under the unchanged rules, give exactly what was issued, per member and in total. Runs on
// PGlite, and on PostgreSQL with PTS_TEST_DB=postgres.

const ADMIN_TOKEN = 'simulator-admin-token-0123456789abcdef';
const HOUR = 3_600_000;
let platform: TestPlatform;
let n = 0;

async function simulate(brandId: string, body: unknown, token = ADMIN_TOKEN) {
  const response = await fetch(`${platform.url}/admin/brands/${brandId}/simulate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  const answer: any = await response.json();
  return { status: response.status, body: answer };
}

async function adminPost(path: string, body: unknown) {
  const response = await fetch(`${platform.url}/admin${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  const answer: any = await response.json();
  expect(response.status, JSON.stringify(answer)).toBeLessThan(300);
  return answer;
}

/** A signed event through the live path; its status is whatever the rules decide. */
function send(brand: CreatedBrand, body: Record<string, unknown>) {
  return platform.signedPost('/pts-api/manual-event', { brandId: brand.brandId, ...body }, brand.securityKey);
}

/** What the ledger says each member was issued in the last `days` (accepted events' rewards). */
async function issuedPerMember(brandId: string, days: number): Promise<Map<string, bigint>> {
  const since = new Date(platform.clock.now().getTime() - days * 24 * HOUR);
  const rows = await platform.deps.db
    .selectFrom('events')
    .select(['user_email', 'reward_amount'])
    .where('brand_id', '=', brandId)
    .where('status', '=', 'accepted')
    .where('created_at', '>=', since)
    .execute();
  const issued = new Map<string, bigint>();
  for (const row of rows) issued.set(row.user_email, (issued.get(row.user_email) ?? 0n) + BigInt(row.reward_amount));
  return issued;
}

beforeAll(async () => {
  // The answers need not wait for their mints: the property makes a few hundred events.
  platform = await startTestPlatform({
    PTS_ADMIN_TOKEN: ADMIN_TOKEN,
    PTS_RATE_LIMIT_IP_PER_MINUTE: '1000000',
    PTS_MINT_WAIT_MS: '0',
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('POST /admin/brands/:brandId/simulate', () => {
  it('refuses what a caller must fix with a 400 naming the field, a missing token with 401, an unknown brand with 404', async () => {
    const brand = await platform.createBrand({
      name: `Sim Bad ${++n}`,
      domain: `sim-bad${n}.example.com`,
      rules: [{ eventType: 'purchase', rewardAmount: 10 }],
    });
    const bad: [unknown, RegExp][] = [
      [{ days: 0 }, /days.*at least 1/],
      [{ days: 91 }, /days.*at most 90/],
      [{ days: 'thirty' }, /days/],
      [
        {
          days: 30,
          rules: [{ eventType: 'purchase', rewardAmount: 5, rate: { pts: 1, per: '1.00', currency: 'USD' } }],
        },
        /rules\.0\.rate.*either rewardAmount or rate/,
      ],
      [
        { days: 30, rules: [{ eventType: 'brand_new_type', cooldownHours: 1 }] },
        /rules\.0\.rewardAmount.*no brand_new_type rule/,
      ],
      [
        { days: 30, rules: [{ eventType: 'purchase', rate: { pts: 1, per: '1.00', currency: 'EUR' } }] },
        /rules\.0\.rate\.currency.*USD/,
      ],
      [
        {
          days: 30,
          rules: [
            { eventType: 'purchase', rewardAmount: 1 },
            { eventType: 'purchase', rewardAmount: 2 },
          ],
        },
        /rules\.1\.eventType.*twice/,
      ],
      [
        { days: 30, campaigns: [{ id: '5b0c7a4e-7d5e-4c1e-9f4a-2d8f1c3b6a70', reward: 5 }] },
        /campaigns\.0\.id.*not a campaign/,
      ],
      [
        {
          days: 30,
          tiers: {
            basis: 'earned',
            period: 'lifetime',
            tiers: [
              { name: 'A', threshold: 5 },
              { name: 'B', threshold: 10 },
            ],
          },
        },
        /tiers\.tiers\.0\.threshold.*start at 0/,
      ],
      [{ days: 30, extra: true }, /extra/],
    ];
    for (const [body, message] of bad) {
      const answer = await simulate(brand.brandId, body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(JSON.stringify(answer.body)).toMatch(message);
    }
    expect((await simulate(brand.brandId, { days: 30 }, 'wrong-token-0123456789abcdef')).status).toBe(401);
    const unknown = await simulate('0x00000000000000000000000000000000000000a1', { days: 30 });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatch(/0x0+a1/);
  });

  it('answers a proposal: pts and cost against actual, members earning more or less, tiers before and after', async () => {
    const brand = await platform.createBrand({
      name: `Sim Shop ${++n}`,
      domain: `sim-shop${n}.example.com`,
      rules: [
        { eventType: 'purchase', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 },
        { eventType: 'order', rate: { pts: 2, per: '1.00', currency: 'USD' }, cooldownHours: 0, maxClaims: -1 },
      ],
    });
    // ann: 3 purchases; bob: 1 purchase and a 12.50 order (25 pts).
    for (const [userEmail, eventType, value] of [
      ['ann@sim.example', 'purchase', undefined],
      ['ann@sim.example', 'purchase', undefined],
      ['ann@sim.example', 'purchase', undefined],
      ['bob@sim.example', 'purchase', undefined],
      ['bob@sim.example', 'order', { amount: '12.50', currency: 'USD' }],
    ] as const) {
      platform.clock.advance(2 * HOUR);
      const answer = await send(brand, { eventType, userEmail, externalId: `o-${++n}`, ...(value ? { value } : {}) });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    }
    const unchanged = await simulate(brand.brandId, { days: 30 });
    expect(unchanged.status, JSON.stringify(unchanged.body)).toBe(200);
    expect(unchanged.body).toMatchObject({
      actual: { ptsIssued: '425', cost: '0.425', membersEarning: 2 },
      simulated: { ptsIssued: '425', cost: '0.425' },
      difference: { pts: '0', cost: '0.000' },
      membersAffected: { earnMore: 0, earnLess: 0, same: 2 },
      events: { total: 5, replayed: 5, passedThrough: 0 },
      topChanges: [],
      tiers: null,
      tokenPrice: { currency: 'USD', ptsPerUsd: 1000 },
    });

    // Purchases limited to 2 per member at 150 pts; orders at 4 pts per dollar; a Silver tier from 300 pts at ×2.
    const proposal = await simulate(brand.brandId, {
      days: 30,
      rules: [
        { eventType: 'purchase', rewardAmount: 150, maxClaims: 2 },
        { eventType: 'order', rate: { pts: 4, per: '1.00', currency: 'USD' } },
      ],
      tiers: {
        basis: 'earned',
        period: 'lifetime',
        tiers: [
          { name: 'Bronze', threshold: 0, multiplier: 1 },
          { name: 'Silver', threshold: 300, multiplier: 2 },
        ],
      },
    });
    expect(proposal.status, JSON.stringify(proposal.body)).toBe(200);
    // ann: 150 + 150 (reaches Silver), then refused by max claims = 300. bob: 150 + 12.50 × 4 = 200.
    expect(proposal.body).toMatchObject({
      actual: { ptsIssued: '425' },
      simulated: { ptsIssued: '500', cost: '0.500', membersEarning: 2 },
      difference: { pts: '75', cost: '0.075' },
      membersAffected: { earnMore: 1, earnLess: 0, same: 1 },
      topChanges: [{ member: 'bob@sim.example', actual: '125', simulated: '200', difference: '75' }],
      tiers: {
        before: null,
        after: [
          { name: 'Bronze', members: 1 },
          { name: 'Silver', members: 1 },
        ],
      },
    });
    const fewer = await simulate(brand.brandId, { days: 30, rules: [{ eventType: 'purchase', active: false }] });
    expect(fewer.body).toMatchObject({
      simulated: { ptsIssued: '25' },
      difference: { pts: '-400', cost: '-0.400' },
      membersAffected: { earnMore: 0, earnLess: 2, same: 0 },
    });
  });
});

/** One event of a generated sequence. */
interface GeneratedEvent {
  member: number;
  kind: 'visit' | 'order' | 'share' | 'post' | 'chat';
  advanceMs: number;
  externalId: boolean;
  skipCooldown: boolean;
  cents: number;
}

const generatedEvent = fc.record<GeneratedEvent>({
  // Two members and short gaps, so limits are reached: per member (visit, chat, the campaign), the global cap (share).
  member: fc.integer({ min: 0, max: 1 }),
  kind: fc.constantFrom('visit', 'visit', 'order', 'share', 'post', 'chat'),
  // Across the duplicate window (60 s), the visit cooldown (1 h) and a day; never 0 (one instant, one batch).
  advanceMs: fc.constantFrom(1_000, 30_000, 10 * 60_000, 2 * HOUR, 2 * HOUR, 26 * HOUR),
  externalId: fc.boolean(),
  skipCooldown: fc.boolean(),
  cents: fc.integer({ min: 0, max: 40_00 }),
});

describe('the replay under unchanged rules', () => {
  it('reproduces exactly what the event path issued, per member and in total (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(generatedEvent, { minLength: 1, maxLength: 14 }),
        fc.constantFrom(1, 2, 30),
        async (sequence, days) => {
          const brand = await platform.createBrand({
            name: `Sim Prop ${++n}`,
            domain: `sim-prop${n}.example.com`,
            rules: [
              { eventType: 'visit', rewardAmount: 10, cooldownHours: 1, maxClaims: 2 },
              {
                eventType: 'order',
                rate: { pts: 3, per: '2.00', currency: 'USD', rounding: 'nearest' },
                minValue: '5.00',
                maxReward: 50,
                cooldownHours: 0,
                maxClaims: -1,
              },
              { eventType: 'share', rewardAmount: 7, cooldownHours: 0, maxClaims: -1, maxTotal: 4 },
              { eventType: 'post', rewardAmount: 20, cooldownHours: 0, maxClaims: -1 },
              { eventType: 'chat', rewardAmount: 3, cooldownHours: 2, maxClaims: 2 },
            ],
          });
          const now = platform.clock.now().getTime();
          const campaign = await adminPost(`/brands/${brand.brandId}/campaigns`, {
            hashtag: `#sim${n}`,
            rewardMultiplier: 1.5,
            startDate: new Date(now - HOUR).toISOString(),
            endDate: new Date(now + 10 * 24 * HOUR).toISOString(),
            maxClaimsPerUser: 2,
          });
          for (const event of sequence) {
            platform.clock.advance(event.advanceMs);
            const metadata: Record<string, unknown> = {};
            if (event.skipCooldown) metadata.skip_cooldown = true;
            if (event.kind === 'post') metadata.campaign_id = campaign.id;
            if (event.kind === 'chat' && event.skipCooldown) metadata.source = 'chat_manual_reward';
            const answer = await send(brand, {
              eventType: event.kind,
              userEmail: `m${event.member}@prop.example`,
              ...(event.externalId ? { externalId: `x-${++n}` } : {}),
              ...(event.kind === 'order'
                ? {
                    value: {
                      amount: `${Math.floor(event.cents / 100)}.${String(event.cents % 100).padStart(2, '0')}`,
                      currency: 'USD',
                    },
                  }
                : {}),
              ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
            });
            expect([200, 403, 409, 429], JSON.stringify(answer.body)).toContain(answer.status);
          }
          const issued = await issuedPerMember(brand.brandId, days);
          const total = [...issued.values()].reduce((a, b) => a + b, 0n);
          const answer = await simulate(brand.brandId, { days });
          expect(answer.status, JSON.stringify(answer.body)).toBe(200);
          expect(answer.body.actual.ptsIssued).toBe(total.toString());
          expect(answer.body.simulated.ptsIssued, JSON.stringify(answer.body)).toBe(total.toString());
          expect(answer.body.membersAffected.earnMore + answer.body.membersAffected.earnLess).toBe(0);
          expect(answer.body.topChanges).toEqual([]);
        },
      ),
      { numRuns: 20 },
    );
  }, 600_000);
});
