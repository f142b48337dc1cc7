import { type CreatedBrand, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';

// VIP tiers (issue 36 §1, docs/tiers.md) through the real app: the admin API's table and its 400s, promotion
// with the tier multiplier and the entry reward paid once (also under concurrent events), the brand-signed
// standing, and the downgrade at the period's turn. Runs on PGlite, and on PostgreSQL with PTS_TEST_DB=postgres.

const ADMIN_TOKEN = 'tiers-admin-token-0123456789abcdef';
let platform: TestPlatform;
let n = 0;

async function admin(method: 'PUT' | 'GET', path: string, body?: unknown) {
  const response = await fetch(`${platform.url}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  const answer: any = await response.json();
  return { status: response.status, body: answer };
}

function signedGet(brand: CreatedBrand, path: string) {
  platform.clock.advance(1000);
  return platform.get(
    path,
    signRequest({
      securityKey: brand.securityKey,
      method: 'GET',
      pathWithQuery: path,
      body: '',
      timestamp: Math.floor(platform.clock.now().getTime() / 1000),
    }),
  );
}

const TABLE = {
  basis: 'earned',
  period: 'calendar_year',
  tiers: [
    { name: 'Bronze', threshold: 0, multiplier: 1, entryReward: 0 },
    { name: 'Silver', threshold: 300, multiplier: 1.5, entryReward: 50 },
    { name: 'Gold', threshold: 1000, multiplier: 2, entryReward: 200 },
  ],
};

async function newBrand(table: unknown = TABLE): Promise<CreatedBrand> {
  const brand = await platform.createBrand({
    name: `Tier Shop ${++n}`,
    domain: `tiers${n}.example.com`,
    rules: [{ eventType: 'purchase', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
  });
  const set = await admin('PUT', `/brands/${brand.brandId}/tiers`, table);
  expect(set.status, JSON.stringify(set.body)).toBe(200);
  return brand;
}

async function purchase(brand: CreatedBrand, userEmail: string) {
  const response = await platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType: 'purchase', userEmail, externalId: `order-${++n}` },
    brand.securityKey,
  );
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.rewardAmount as number;
}

async function entryRewards(brand: CreatedBrand, userEmail: string) {
  return platform.deps.db
    .selectFrom('events')
    .select(['reward_amount', 'metadata'])
    .where('brand_id', '=', brand.brandId)
    .where('user_email', '=', userEmail)
    .where('event_type', '=', 'tier_entry')
    .where('status', '=', 'accepted')
    .execute();
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_ADMIN_TOKEN: ADMIN_TOKEN, PTS_RATE_LIMIT_IP_PER_MINUTE: '100000' });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('the tier table on the admin API', () => {
  it('refuses a table a brand must fix, with a 400 that says what, and keeps an audited table', async () => {
    const brand = await platform.createBrand({ name: 'Tier Admin', domain: 'tier-admin.example.com' });
    const put = (body: unknown) => admin('PUT', `/brands/${brand.brandId}/tiers`, body);
    const bad: [unknown, RegExp][] = [
      [{ ...TABLE, tiers: TABLE.tiers.slice(0, 1) }, /at least 2 tiers/],
      [{ ...TABLE, basis: 'visits' }, /earned, spent/],
      [{ ...TABLE, period: 'weekly' }, /rolling_365, calendar_year, lifetime/],
      [{ ...TABLE, tiers: [{ ...TABLE.tiers[1], threshold: 5 }, TABLE.tiers[2]] }, /first tier must start at 0/],
      [{ ...TABLE, tiers: [TABLE.tiers[0], TABLE.tiers[2], TABLE.tiers[1]] }, /thresholds must rise/],
      [{ ...TABLE, tiers: [TABLE.tiers[0], { ...TABLE.tiers[1], multiplier: 1.255 }] }, /at most 2 decimals/],
      [{ ...TABLE, tiers: [TABLE.tiers[0], { ...TABLE.tiers[1], multiplier: 0.5 }] }, /at least 1/],
      [{ ...TABLE, tiers: [TABLE.tiers[0], { ...TABLE.tiers[1], threshold: '12.5' }] }, /whole number of pts/],
      [
        { ...TABLE, basis: 'spent', tiers: [TABLE.tiers[0], { ...TABLE.tiers[1], threshold: '12.505' }] },
        /USD has 2 decimal places/,
      ],
      [
        { ...TABLE, tiers: [TABLE.tiers[0], { ...TABLE.tiers[1], perks: [987654] }] },
        /perks this brand does not have: 987654/,
      ],
    ];
    for (const [body, message] of bad) {
      const answer = await put(body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(JSON.stringify(answer.body)).toMatch(message);
    }
    expect((await admin('GET', `/brands/${brand.brandId}/tiers`)).body).toMatchObject({ tiers: null, basis: null });
    const ok = await put({
      ...TABLE,
      basis: 'spent',
      graceDays: 14,
      tiers: [TABLE.tiers[0], { ...TABLE.tiers[1], threshold: '250.5' }],
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const read = await admin('GET', `/brands/${brand.brandId}/tiers`);
    expect(read.body).toMatchObject({ basis: 'spent', period: 'calendar_year', graceDays: 14, currency: 'USD' });
    expect(read.body.tiers.map((t: { threshold: string }) => t.threshold)).toEqual(['0.00', '250.50']);
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .select(['actor', 'details'])
      .where('action', '=', 'tiers.set')
      .where('subject', '=', brand.brandId)
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]?.actor).toBe('admin');
  });
});

describe('promotion', () => {
  it('promotes when the total reaches a tier, pays its entry reward once, and multiplies later rewards', async () => {
    const brand = await newBrand();
    const member = 'climber@example.com';
    const path = `/services/tier/${brand.brandId}/${encodeURIComponent(member)}`;
    expect((await signedGet(brand, path)).body).toMatchObject({ tier: 'Bronze', next: { name: 'Silver' } });
    expect(await purchase(brand, member)).toBe(100);
    expect(await purchase(brand, member)).toBe(100);
    expect(await entryRewards(brand, member)).toHaveLength(0);
    expect(await purchase(brand, member)).toBe(100); // 300: Silver
    expect((await entryRewards(brand, member)).map((e) => Number(e.reward_amount))).toEqual([50]);
    expect(await purchase(brand, member)).toBe(150); // × 1.5
    const standing = await signedGet(brand, path);
    expect(standing.status).toBe(200);
    // 450 earned by events (the entry reward does not count): 550 left to Gold.
    expect(standing.body).toMatchObject({
      tier: 'Silver',
      multiplier: 1.5,
      next: { name: 'Gold', threshold: '1000' },
      progress: { basis: 'earned', period: 'calendar_year', current: '450', remaining: '550' },
    });
    const unsigned = await platform.get(path);
    expect(unsigned.status).toBe(401);
  });

  it('pays each entry reward once when a member’s events arrive together', async () => {
    const brand = await newBrand();
    const member = 'rush@example.com';
    await Promise.all(Array.from({ length: 12 }, () => purchase(brand, member)));
    const entries = await entryRewards(brand, member);
    // 12 purchases of at least 100 pass Silver (300) and Gold (1000): each entry reward exactly once.
    expect(entries.map((e) => Number(e.reward_amount)).sort((a, b) => a - b)).toEqual([50, 200]);
    const held = await platform.deps.db
      .selectFrom('member_tiers')
      .select('tier_name')
      .where('brand_id', '=', brand.brandId)
      .where('member', '=', member)
      .executeTakeFirstOrThrow();
    expect(held.tier_name).toBe('Gold');
  });
});

describe('tier-only perks', () => {
  it('refuses a Silver perk to a Bronze member with the tier it needs, then lets them redeem once promoted', async () => {
    const brand = await platform.createBrand({
      name: 'Tier Perks',
      domain: 'tier-perks.example.com',
      rules: [{ eventType: 'purchase', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
    });
    const created = await platform.post(
      '/admin/perks',
      { brandId: brand.brandId, name: 'Silver lounge', cost: 30, category: 'merch' },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const perk = created.body.perk as { perkId: number; uuid: string };
    const set = await admin('PUT', `/brands/${brand.brandId}/tiers`, {
      ...TABLE,
      tiers: [TABLE.tiers[0], { ...TABLE.tiers[1], perks: [perk.perkId] }, TABLE.tiers[2]],
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const member = 'lounge@example.com';
    const redeem = () => {
      platform.clock.advance(1_000);
      return platform.signedPost(
        '/services/perks/redeem',
        { brandId: brand.brandId, perkId: perk.uuid, userIdentifier: member, platform: 'web' },
        brand.securityKey,
      );
    };
    await purchase(brand, member);
    await purchase(brand, member);
    await waitForMintsSettled(platform);
    const refused = await redeem();
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body.error).toMatch(/only for members at the Silver tier or above; lounge@example.com is Bronze/);
    expect(refused.body.details).toMatchObject({
      reason: 'tier_required',
      requiredTier: 'Silver',
      memberTier: 'Bronze',
    });
    await purchase(brand, member); // 300: Silver
    await waitForMintsSettled(platform);
    const allowed = await redeem();
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
  });
});

describe('the period’s turn', () => {
  it('downgrades at the turn (after the grace), announces it, and a regained tier pays no entry reward again', async () => {
    const brand = await newBrand();
    const graced = await newBrand({ ...TABLE, graceDays: 10 });
    await platform.deps.db
      .insertInto('webhook_endpoints')
      .values({
        brand_id: brand.brandId,
        url: 'https://hooks.example.com/pts',
        secret_encrypted: platform.deps.secrets.encrypt('whsec_test'),
        active: true,
      })
      .execute();
    const member = 'seasonal@example.com';
    for (let i = 0; i < 3; i++) {
      await purchase(brand, member);
      await purchase(graced, member);
    }
    const tierOf = async (b: CreatedBrand) =>
      (await signedGet(b, `/services/tier/${b.brandId}/${encodeURIComponent(member)}`)).body.tier;
    expect(await tierOf(brand)).toBe('Silver');
    // The same year: the turn keeps everyone where they are.
    await platform.services.tiers.runTurn();
    expect(await tierOf(brand)).toBe('Silver');
    // Into next year: the calendar year turned, the total is 0.
    const now = platform.clock.now();
    platform.clock.set(new Date(Date.UTC(now.getUTCFullYear() + 1, 0, 1, 1)));
    // Two replicas tick at once: each brand's run is claimed by one of them (one downgrade, one webhook).
    const [a, b] = await Promise.all([platform.services.tiers.runTurn(), platform.services.tiers.runTurn()]);
    expect(a.downgraded + b.downgraded).toBeGreaterThanOrEqual(1);
    expect(a.brands + b.brands).toBe(
      (await platform.deps.db.selectFrom('brand_tiers').select('brand_id').execute()).length,
    );
    expect(await tierOf(brand)).toBe('Bronze');
    expect(await tierOf(graced)).toBe('Silver'); // kept through its 10-day grace
    const hooks = await platform.deps.db
      .selectFrom('webhook_deliveries')
      .select('body')
      .where('type', '=', 'member.tier_changed')
      .where('brand_id', '=', brand.brandId)
      .execute();
    expect(hooks.map((h) => JSON.parse(h.body).data)).toEqual([
      expect.objectContaining({ from: 'Bronze', to: 'Silver', direction: 'up', userId: member }),
      expect.objectContaining({ from: 'Silver', to: 'Bronze', direction: 'down', userId: member }),
    ]);
    platform.clock.advance(11 * 86_400_000);
    await platform.services.tiers.runTurn();
    expect(await tierOf(graced)).toBe('Bronze');
    // Regained: Silver again, and no second entry reward.
    for (let i = 0; i < 3; i++) await purchase(brand, member);
    expect(await tierOf(brand)).toBe('Silver');
    expect((await entryRewards(brand, member)).map((e) => Number(e.reward_amount))).toEqual([50]);
  });
});
