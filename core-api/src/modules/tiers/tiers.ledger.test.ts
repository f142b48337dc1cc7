import { type CreatedBrand, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform, type TestResponse } from '../../../test/platform.ts';

// Tiers read the one ledger (issue 36 §1, docs/tiers.md "Reversals" and "Linked members"): a reversal lowers the
// member's tier basis at once and moves them down at the period's turn, and a member who linked Discord and
// Telegram holds one tier from both identities' earnings. Runs on PGlite, and on PostgreSQL with
// PTS_TEST_DB=postgres.

const ADMIN_TOKEN = 'tiers-ledger-admin-token-0123456789abcdef';
let platform: TestPlatform;
let seq = 0;

const TABLE = {
  basis: 'earned',
  period: 'rolling_365',
  graceDays: 0,
  tiers: [
    { name: 'Bronze', threshold: 0, multiplier: 1, entryReward: 0 },
    { name: 'Silver', threshold: 300, multiplier: 1, entryReward: 50 },
    { name: 'Gold', threshold: 1000, multiplier: 2, entryReward: 200 },
  ],
};

/** A signed request at the platform clock; distinct timestamps keep identical bodies distinct. */
async function signed(brand: CreatedBrand, method: string, path: string, body?: unknown): Promise<TestResponse> {
  const raw = body === undefined ? '' : JSON.stringify(body);
  const timestamp = Math.floor(platform.clock.now().getTime() / 1000) - (seq++ % 250);
  const headers = signRequest({ securityKey: brand.securityKey, method, pathWithQuery: path, body: raw, timestamp });
  const response = await fetch(`${platform.url}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: raw }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

async function newBrand(name: string): Promise<CreatedBrand> {
  const brand = await platform.createBrand({
    name,
    domain: `${name.toLowerCase().replaceAll(' ', '-')}.example.com`,
    rules: [{ eventType: 'purchase', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
  });
  const set = await fetch(`${platform.url}/admin/brands/${brand.brandId}/tiers`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(TABLE),
  });
  expect(set.status).toBe(200);
  return brand;
}

async function purchase(brand: CreatedBrand, userEmail: string): Promise<string> {
  const answer = await signed(brand, 'POST', '/pts-api/manual-event', {
    brandId: brand.brandId,
    eventType: 'purchase',
    userEmail,
    externalId: `order-${++seq}`,
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.eventId as string;
}

async function standing(brand: CreatedBrand, member: string) {
  const answer = await signed(brand, 'GET', `/services/tier/${brand.brandId}/${encodeURIComponent(member)}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as { tier: string; progress: { current: string; remaining: string | null } };
}

async function entryRewards(brand: CreatedBrand) {
  const rows = await platform.deps.db
    .selectFrom('events')
    .select('reward_amount')
    .where('brand_id', '=', brand.brandId)
    .where('event_type', '=', 'tier_entry')
    .where('status', '=', 'accepted')
    .execute();
  return rows.map((row) => Number(row.reward_amount));
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_ADMIN_TOKEN: ADMIN_TOKEN, PTS_RATE_LIMIT_IP_PER_MINUTE: '100000' });
  platform.clock.set('2026-06-01T10:00:00Z');
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('a reversal and the tier', () => {
  it('lowers the tier basis at once and moves the member down at the next turn, not before', async () => {
    const brand = await newBrand('Refund Tiers');
    const member = 'refunded@example.com';
    const events: string[] = [];
    for (let i = 0; i < 3; i++) events.push(await purchase(brand, member));
    await waitForMintsSettled(platform);
    expect(await standing(brand, member)).toMatchObject({ tier: 'Silver', progress: { current: '300' } });

    const reversed = await signed(brand, 'POST', '/pts-api/reversals', {
      brandId: brand.brandId,
      reversalId: 'refund-tier-1',
      eventId: events[0],
    });
    expect(reversed.status, JSON.stringify(reversed.body)).toBe(200);
    // The basis reads the reversal at once; the held tier waits for the turn (promotions at once, downgrades at the turn).
    expect(await standing(brand, member)).toMatchObject({
      tier: 'Silver',
      progress: { current: '200', remaining: '800' },
    });

    // A rolling_365 period turns every UTC day: the next day's run judges the lowered total.
    platform.clock.advance(86_400_000);
    const turn = await platform.services.tiers.runTurn();
    expect(turn.downgraded).toBeGreaterThanOrEqual(1);
    expect(await standing(brand, member)).toMatchObject({ tier: 'Bronze', progress: { current: '200' } });

    // Regaining Silver takes a new 100 pts, and its entry reward is not paid twice.
    await purchase(brand, member);
    expect(await standing(brand, member)).toMatchObject({ tier: 'Silver', progress: { current: '300' } });
    expect(await entryRewards(brand)).toEqual([50]);
  });
});

describe('a linked member', () => {
  it('holds one tier from the earnings of every identity, read through any of them', async () => {
    const brand = await newBrand('Linked Tiers');
    const discord = 'discord_7100001@pts.example';
    const telegram = 'telegram_7200001@pts.example';
    const code = await signed(brand, 'POST', '/services/link/code', {
      brandId: brand.brandId,
      userIdentifier: discord,
    });
    expect(code.status, JSON.stringify(code.body)).toBe(200);
    const linked = await signed(brand, 'POST', '/services/link/confirm', {
      brandId: brand.brandId,
      userIdentifier: telegram,
      code: code.body.code,
    });
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);

    // 200 on Discord, 100 on Telegram: 300 for the account, Silver, its entry reward paid once.
    await purchase(brand, discord);
    await purchase(brand, discord);
    expect(await standing(brand, telegram)).toMatchObject({ tier: 'Bronze', progress: { current: '200' } });
    await purchase(brand, telegram);
    for (const identity of [discord, telegram]) {
      expect(await standing(brand, identity)).toMatchObject({
        tier: 'Silver',
        progress: { current: '300', remaining: '700' },
      });
    }
    expect(await entryRewards(brand)).toEqual([50]);
    const rows = await platform.deps.db
      .selectFrom('member_tiers')
      .select(['member', 'tier_name'])
      .where('brand_id', '=', brand.brandId)
      .execute();
    expect(rows).toEqual([{ member: discord, tier_name: 'Silver' }]);

    // The turn judges the account on both identities' total: it stays Silver.
    platform.clock.advance(86_400_000);
    await platform.services.tiers.runTurn();
    expect(await standing(brand, telegram)).toMatchObject({ tier: 'Silver' });
  });
});
