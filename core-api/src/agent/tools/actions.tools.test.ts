import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type AgentFixture, type AgentPrincipal, type AgentTool, invokeAgentTool } from '../agent-tool.ts';
import { actionsTools } from './actions.tools.ts';
import { discoveryTools } from './discovery.tools.ts';
import { createPerkViaAdmin, toolCaller, UNKNOWN_BRAND } from './tool-test-support.ts';

// The action tools on the real platform: events through the composed event pipeline (one batcher), perk
// redemptions through the real redemption service, relayer and contracts on anvil.

let platform: TestPlatform;
let shop: CreatedBrand;
let other: CreatedBrand;
let tools: AgentTool[];
let perk: { perkId: number; uuid: string };
let dearPerk: { perkId: number; uuid: string };
let userCount = 0;

const principalFor = (brandIds: string[], keyId = 'key-shop'): AgentPrincipal => ({
  keyId,
  name: keyId,
  brandIds,
  canManageProgram: false,
  canOnboard: false,
  tier: 'free',
  ratePerMinute: 20,
});
let shopKey: AgentPrincipal;
/** A key of another brand trying to act for the shop or read its members. */
let hostileKey: AgentPrincipal;

const caller = toolCaller(
  () => platform,
  () => tools,
);
const { contextOf } = caller;
/** Calls a tool with the shop's key unless told (null: unsigned) and checks the answer's schema. */
const call = (
  name: string,
  raw: { params?: unknown; query?: unknown; body?: unknown },
  principal: AgentPrincipal | null = shopKey,
) => caller.call(name, raw, principal);
const refused = (name: string, raw: { params?: unknown; body?: unknown }, principal: AgentPrincipal | null = shopKey) =>
  caller.invoke(name, raw, principal);

const newUser = () => `agent-user${++userCount}@example.com`;

async function acceptedEvents(identityKey: string, eventType?: string) {
  let query = platform.deps.db
    .selectFrom('events')
    .select(['id', 'metadata', 'reward_amount'])
    .where('user_email', '=', identityKey)
    .where('status', '=', 'accepted');
  if (eventType) query = query.where('event_type', '=', eventType);
  return query.execute();
}

/** `times` rewarded `earn` events of 100 pts at `brand` through process_event, mints confirmed. */
async function earnThroughAgent(userId: string, times: number, brand = shop, key = shopKey) {
  for (let i = 0; i < times; i++) {
    platform.clock.advance(61_000); // outside the duplicate window
    await call('process_event', { body: { brandId: brand.brandId, eventType: 'earn', userId, metadata: { i } } }, key);
  }
  await waitForMintsSettled(platform);
}

const createPerk = (body: Record<string, unknown>) => createPerkViaAdmin(platform, shop.brandId, body);

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
  });
  tools = actionsTools(platform.services.agent.toolDeps);
  shop = await platform.createBrand({
    name: 'Shop',
    domain: 'shop.example.com',
    rules: [
      { eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 },
      // Once per day per user.
      { eventType: 'daily_visit', rewardAmount: 7, cooldownHours: 24, maxClaims: -1 },
    ],
  });
  other = await platform.createBrand({
    name: 'Other',
    domain: 'other.example.com',
    rules: [{ eventType: 'earn', rewardAmount: 40, cooldownHours: 0, maxClaims: -1 }],
  });
  shopKey = principalFor([shop.brandId]);
  hostileKey = principalFor([other.brandId], 'key-other');
  perk = await createPerk({ cost: 100, category: 'merch' });
  dearPerk = await createPerk({ cost: 1000, category: 'travel' });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('process_event', () => {
  it('rewards through the event pipeline and answers like the event API; the key is recorded', async () => {
    const userId = newUser();
    const result = await call('process_event', {
      body: { brandId: shop.brandId, eventType: 'earn', userId: userId.toUpperCase(), metadata: { order: 'A1' } },
    });
    expect(result).toMatchObject({ success: true, rewardAmount: 100, eventType: 'earn', walletCreated: true });
    const rows = await acceptedEvents(userId);
    expect(rows.map((row) => row.id)).toEqual([result.eventId]);
    expect(rows[0]?.metadata).toEqual({ order: 'A1', agentKeyId: 'key-shop' });
    await waitForMintsSettled(platform);
    expect(await tokenBalance(platform, result.walletAddress)).toBe(100n);
  });

  it("takes the rule's eventId (from get_brand) instead of eventType", async () => {
    const rule = await platform.deps.db
      .selectFrom('event_rules')
      .select('id')
      .where('brand_id', '=', shop.brandId)
      .where('event_type', '=', 'daily_visit')
      .executeTakeFirstOrThrow();
    const result = await call('process_event', {
      body: { brandId: shop.brandId, eventId: rule.id, userId: newUser() },
    });
    expect(result).toMatchObject({ rewardAmount: 7, eventType: 'daily_visit' });
    await expect(
      refused('process_event', { body: { brandId: shop.brandId, eventId: 'no-such-rule', userId: newUser() } }),
    ).rejects.toMatchObject({ status: 404, code: 'RULE_NOT_FOUND' });
  });

  it('refuses malformed bodies with 400 and unknown event types with 400, unknown brands with 404', async () => {
    const base = { brandId: shop.brandId, eventType: 'earn', userId: newUser() };
    for (const body of [
      { ...base, userId: 'not-an-email' },
      { ...base, userId: undefined },
      { ...base, brandId: 'shop' },
      { ...base, eventId: 'x' }, // both eventType and eventId
      { brandId: shop.brandId, userId: newUser() }, // neither
      { ...base, metadata: 'text' },
    ]) {
      await expect(refused('process_event', { body }), JSON.stringify(body)).rejects.toMatchObject({ status: 400 });
    }
    await expect(refused('process_event', { body: { ...base, eventType: 'nope' } })).rejects.toMatchObject({
      status: 400,
      code: 'UNKNOWN_EVENT_TYPE',
    });
    await expect(
      refused('process_event', { body: { ...base, brandId: UNKNOWN_BRAND } }, principalFor([UNKNOWN_BRAND])),
    ).rejects.toMatchObject({ status: 404 });
  });

  it('refuses a key acting for another brand (403, nothing recorded), brand-only privileges (403) and no key (401)', async () => {
    const userId = newUser();
    await expect(
      refused('process_event', { body: { brandId: shop.brandId, eventType: 'earn', userId } }, hostileKey),
    ).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN' });
    for (const metadata of [{ skip_cooldown: true }, { source: 'chat_manual_reward' }, { campaign_id: 'x' }]) {
      await expect(
        refused('process_event', { body: { brandId: shop.brandId, eventType: 'earn', userId, metadata } }),
      ).rejects.toMatchObject({ status: 403, details: { reason: 'privileged_metadata' } });
    }
    await expect(
      refused('process_event', { body: { brandId: shop.brandId, eventType: 'earn', userId } }, null),
    ).rejects.toMatchObject({ status: 401 });
    const any = await platform.deps.db.selectFrom('events').select('id').where('user_email', '=', userId).execute();
    expect(any).toEqual([]);
  });

  it('pays exactly once for 10 identical calls at once under a once-per-day rule', async () => {
    const userId = newUser();
    const body = { brandId: shop.brandId, eventType: 'daily_visit', userId };
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => call('process_event', { body })));
    const paid = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(paid).toHaveLength(1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect([409, 429]).toContain(outcome.reason.status);
    }
    expect(await acceptedEvents(userId, 'daily_visit')).toHaveLength(1);
    // A day later the rule pays again.
    platform.clock.advance(24 * 3600_000 + 1_000);
    expect((await call('process_event', { body })).rewardAmount).toBe(7);
    expect(await acceptedEvents(userId, 'daily_visit')).toHaveLength(2);
  });
  it('shares limits with the event API: a reward through /pts-api/manual-event holds the cooldown for the agent', async () => {
    const userId = newUser();
    platform.clock.advance(1_000);
    const viaApi = await platform.signedPost(
      '/pts-api/manual-event',
      { brandId: shop.brandId, eventType: 'daily_visit', userEmail: userId, domain: 'shop.example.com' },
      shop.securityKey,
    );
    expect(viaApi.status, JSON.stringify(viaApi.body)).toBe(200);
    platform.clock.advance(3600_000); // past the duplicate window, inside the 24 h cooldown
    await expect(
      refused('process_event', { body: { brandId: shop.brandId, eventType: 'daily_visit', userId } }),
    ).rejects.toMatchObject({ status: 429, code: 'COOLDOWN_ACTIVE' });
    expect(await acceptedEvents(userId, 'daily_visit')).toHaveLength(1);
  });
});

describe('process_bulk_events', () => {
  it('judges each item in order; a brand outside the key fails alone with 403', async () => {
    const [a, b] = [newUser(), newUser()];
    const result = await call('process_bulk_events', {
      body: {
        events: [
          { brandId: shop.brandId, eventType: 'daily_visit', userId: a },
          { brandId: shop.brandId, eventType: 'daily_visit', userId: a },
          { brandId: other.brandId, eventType: 'earn', userId: b },
          { brandId: shop.brandId, eventType: 'earn', userId: b },
        ],
      },
    });
    expect(result).toMatchObject({ success: false, processed: 2, failed: 2 });
    expect(result.results[0]).toMatchObject({ success: true, rewardAmount: 7 });
    expect(result.results[1]).toMatchObject({ success: false, index: 1 });
    expect([409, 429]).toContain(result.results[1].status);
    expect(result.results[2]).toMatchObject({ success: false, index: 2, status: 403, code: 'FORBIDDEN' });
    expect(result.results[3]).toMatchObject({ success: true, rewardAmount: 100 });
    expect(await acceptedEvents(a)).toHaveLength(1);
    const atOther = await platform.deps.db
      .selectFrom('events')
      .select('id')
      .where('brand_id', '=', other.brandId)
      .where('user_email', '=', b)
      .execute();
    expect(atOther).toEqual([]);
  });

  it('refuses an empty list, more than 100 events and a malformed item with 400', async () => {
    const item = { brandId: shop.brandId, eventType: 'earn', userId: newUser() };
    for (const events of [[], Array.from({ length: 101 }, () => item), [item, { ...item, userId: 'x' }]]) {
      await expect(refused('process_bulk_events', { body: { events } })).rejects.toMatchObject({ status: 400 });
    }
    await expect(refused('process_bulk_events', { body: { events: [item] } }, null)).rejects.toMatchObject({
      status: 401,
    });
  });
});

describe('get_user_balance, get_user_stats, get_user_portfolio', () => {
  let alice: string;
  let wallet: string;
  beforeAll(async () => {
    alice = newUser();
    await earnThroughAgent(alice, 3);
    await earnThroughAgent(alice, 1, other, hostileKey);
    const row = await platform.deps.db
      .selectFrom('users')
      .select('wallet_address')
      .where('email', '=', alice)
      .executeTakeFirstOrThrow();
    wallet = row.wallet_address as string;
  }, 60_000);

  it("balance: the wallet's pts on chain and this brand's earned and redeemed", async () => {
    const result = await call('get_user_balance', { params: { userId: alice, brandId: shop.brandId } });
    expect(result).toEqual({
      brandId: shop.brandId,
      userId: alice,
      walletAddress: wallet,
      balance: 340, // one token: 3 × 100 at the shop + 40 at the other brand
      pending: 0,
      totalEarned: 300,
      confirmedEarned: 300,
      pendingEarned: 0,
      totalRedeemed: 0,
      pendingRedeemed: 0,
      // Labelled as every member surface labels them: the wallet (one token) and this brand's ledger.
      figures: {
        walletAddress: wallet,
        counts: 'wallet-on-chain+ledger',
        onChain: 340,
        pending: 0,
        reserved: 0,
        spendable: 340,
        earned: { total: 300, confirmed: 300, pending: 0, unminted: 0, reversed: 0 },
        debt: 0,
      },
    });
  });

  it('stats: earnings per event type, redemptions, streak and achievements', async () => {
    const result = await call('get_user_stats', { params: { userId: alice, brandId: shop.brandId } });
    expect(result.earnings).toMatchObject({
      totalEarned: 300,
      events: 3,
      byEventType: [{ eventType: 'earn', count: 3, amount: 300 }],
    });
    expect(result.earnings.lastEarnedAt).toEqual(expect.any(String));
    expect(result.redemptions).toEqual({ count: 0, totalRedeemed: 0, pending: 0, pendingRedeemed: 0 });
    expect(result.streak).toMatchObject({ current: 0, active: false });
    expect(result.achievements.total).toBe(result.achievements.items.length);
  });

  it("portfolio: only the key's brands, with the most expensive perk the balance covers", async () => {
    const result = await call('get_user_portfolio', { params: { userId: alice } });
    expect(result).toMatchObject({ userId: alice, walletAddress: wallet, balance: 340, spendable: 340 });
    expect(result.brands).toHaveLength(1);
    expect(result.brands[0]).toMatchObject({ brandId: shop.brandId, totalEarned: 300, totalRedeemed: 0 });
    expect(result.bestAffordablePerk).toMatchObject({ uuid: perk.uuid, cost: 100 });
    expect(result.bestAffordablePerk.uuid).not.toBe(dearPerk.uuid);
    expect(result.activeStreaks).toEqual([]);
    // The other brand's key sees only its own brand.
    const theirs = await call('get_user_portfolio', { params: { userId: alice } }, hostileKey);
    expect(theirs.brands.map((b: { brandId: string }) => b.brandId)).toEqual([other.brandId]);
    expect(theirs.brands[0]).toMatchObject({ totalEarned: 40, bestAffordablePerk: null });
  });

  it('portfolio over a key of several brands: each brand its own totals (one batched read), in the key order', async () => {
    const both = principalFor([other.brandId, shop.brandId, UNKNOWN_BRAND], 'key-both');
    const result = await call('get_user_portfolio', { params: { userId: alice } }, both);
    // The unknown brand of the key is simply not shown; the member knows the other two.
    expect(result.brands.map((b: { brandId: string }) => b.brandId)).toEqual([other.brandId, shop.brandId]);
    expect(result.brands[0]).toMatchObject({ totalEarned: 40, totalRedeemed: 0, bestAffordablePerk: null });
    expect(result.brands[1]).toMatchObject({ totalEarned: 300, bestAffordablePerk: { uuid: perk.uuid, cost: 100 } });
    expect(result.bestAffordablePerk).toMatchObject({ brandId: shop.brandId, uuid: perk.uuid });
    expect(result.balance).toBe(340);
  });

  it('404 for a user unknown to the brand (or to every brand of the key), 403 for a hostile key, 400 for bad ids', async () => {
    const onlyOther = newUser();
    await earnThroughAgent(onlyOther, 1, other, hostileKey);
    for (const name of ['get_user_balance', 'get_user_stats']) {
      await expect(refused(name, { params: { userId: newUser(), brandId: shop.brandId } })).rejects.toMatchObject({
        status: 404,
      });
      await expect(refused(name, { params: { userId: onlyOther, brandId: shop.brandId } })).rejects.toMatchObject({
        status: 404,
      });
      await expect(
        refused(name, { params: { userId: alice, brandId: UNKNOWN_BRAND } }, principalFor([UNKNOWN_BRAND])),
      ).rejects.toMatchObject({ status: 404 });
      await expect(
        refused(name, { params: { userId: alice, brandId: shop.brandId } }, hostileKey),
      ).rejects.toMatchObject({
        status: 403,
      });
      await expect(refused(name, { params: { userId: 'alice', brandId: shop.brandId } })).rejects.toMatchObject({
        status: 400,
      });
    }
    await expect(refused('get_user_portfolio', { params: { userId: onlyOther } })).rejects.toMatchObject({
      status: 404,
    });
    await expect(refused('get_user_portfolio', { params: { userId: 'x' } })).rejects.toMatchObject({ status: 400 });
    await expect(refused('get_user_portfolio', { params: { userId: alice } }, null)).rejects.toMatchObject({
      status: 401,
    });
  });
});

describe('redeem_perk', () => {
  it('two redemptions at once with pts for one: exactly one succeeds, the other is refused for balance', async () => {
    const bob = newUser();
    await earnThroughAgent(bob, 1); // 100 pts = one perk
    const body = { perkId: perk.uuid, userId: bob, brandId: shop.brandId };
    const outcomes = await Promise.allSettled([call('redeem_perk', { body }), call('redeem_perk', { body })]);
    const ok = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(ok).toHaveLength(1);
    const [failedOne] = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(failedOne?.reason).toMatchObject({ status: 409, code: 'INSUFFICIENT_BALANCE' });
    const done = (ok[0] as PromiseFulfilledResult<{ status: string; perk: { id: string }; confirmationCode: string }>)
      .value;
    expect(done).toMatchObject({ success: true, status: 'confirmed', perk: { id: perk.uuid, cost: 100 } });
    const stats = await call('get_user_stats', { params: { userId: bob, brandId: shop.brandId } });
    expect(stats.redemptions).toEqual({ count: 1, totalRedeemed: 100, pending: 0, pendingRedeemed: 0 });
    const balance = await call('get_user_balance', { params: { userId: bob, brandId: shop.brandId } });
    expect(balance).toMatchObject({ balance: 0, totalEarned: 100, totalRedeemed: 100 });
  });

  it('a redemption through /services/perks/redeem and one through the agent at the same moment both pay (one wallet queue)', async () => {
    const dora = newUser();
    await earnThroughAgent(dora, 2); // 200 pts = two perks
    const twice = await createPerk({ cost: 100, maxPerUser: 2 });
    const body = { perkId: twice.uuid, userId: dora, brandId: shop.brandId };
    const [services, agent] = await Promise.all([
      platform.signedPost(
        '/services/perks/redeem',
        { brandId: shop.brandId, perkId: twice.uuid, userIdentifier: dora },
        shop.securityKey,
      ),
      call('redeem_perk', { body }),
    ]);
    expect(services.status).toBe(200);
    expect(services.body).toMatchObject({ success: true, status: 'confirmed' });
    expect(agent).toMatchObject({ success: true, status: 'confirmed' });
    const balance = await call('get_user_balance', { params: { userId: dora, brandId: shop.brandId } });
    expect(balance).toMatchObject({ balance: 0, totalEarned: 200, totalRedeemed: 200 });
  });

  it('portfolio: a perk the member already holds the per-user maximum of is no longer their best affordable perk', async () => {
    const erin = newUser();
    await earnThroughAgent(erin, 3); // 300 pts
    const before = await call('get_user_portfolio', { params: { userId: erin } });
    expect(before.bestAffordablePerk).toMatchObject({ uuid: perk.uuid, cost: 100 }); // oldest of the 100s
    await call('redeem_perk', { body: { perkId: perk.uuid, userId: erin, brandId: shop.brandId } }); // 1 per user
    const after = await call('get_user_portfolio', { params: { userId: erin } });
    expect(after.spendable).toBe(200);
    expect(after.bestAffordablePerk?.uuid).not.toBe(perk.uuid);
    expect(after.brands[0].bestAffordablePerk?.uuid).not.toBe(perk.uuid);
  });

  it('portfolio: a sold-out perk is never the best affordable perk (the judgeRedemption redeem_perk applies)', async () => {
    const fay = newUser();
    const gus = newUser();
    await earnThroughAgent(fay, 5); // 500 pts each
    await earnThroughAgent(gus, 5);
    const rare = await createPerk({ cost: 400, maxSupply: 1 });
    await call('redeem_perk', { body: { perkId: rare.uuid, userId: gus, brandId: shop.brandId } });
    // fay can afford it, but the only one is gone: redeem_perk refuses it…
    await expect(
      refused('redeem_perk', { body: { perkId: rare.uuid, userId: fay, brandId: shop.brandId } }),
    ).rejects.toMatchObject({ status: 409, code: 'SOLD_OUT' });
    // …so the portfolio never offers it: the best is the oldest 100 pts perk.
    const portfolio = await call('get_user_portfolio', { params: { userId: fay } });
    expect(portfolio.spendable).toBe(500);
    expect(portfolio.bestAffordablePerk).toMatchObject({ uuid: perk.uuid, cost: 100 });
    expect(portfolio.brands[0].bestAffordablePerk).toMatchObject({ uuid: perk.uuid, cost: 100 });
  });

  it('403 for a hostile key, 404 for unknown perks and users, 400 for malformed bodies', async () => {
    const carol = newUser();
    await earnThroughAgent(carol, 1);
    const body = { perkId: perk.uuid, userId: carol, brandId: shop.brandId };
    await expect(refused('redeem_perk', { body }, hostileKey)).rejects.toMatchObject({ status: 403 });
    await expect(refused('redeem_perk', { body: { ...body, perkId: '999999' } })).rejects.toMatchObject({
      status: 404,
    });
    await expect(refused('redeem_perk', { body: { ...body, userId: newUser() } })).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      refused('redeem_perk', { body: { ...body, brandId: UNKNOWN_BRAND } }, principalFor([UNKNOWN_BRAND])),
    ).rejects.toMatchObject({ status: 404 });
    for (const bad of [
      { ...body, perkId: 'abc' },
      { ...body, userId: 'carol' },
      { perkId: perk.uuid, userId: carol },
    ]) {
      await expect(refused('redeem_perk', { body: bad })).rejects.toMatchObject({ status: 400 });
    }
    // A perk the balance does not cover: refused, nothing spent.
    await expect(refused('redeem_perk', { body: { ...body, perkId: dearPerk.uuid } })).rejects.toMatchObject({
      status: 409,
      code: 'INSUFFICIENT_BALANCE',
    });
    expect(
      await tokenBalance(
        platform,
        (await call('get_user_balance', { params: { userId: carol, brandId: shop.brandId } })).walletAddress,
      ),
    ).toBe(100n);
  });
});

describe('examples', () => {
  it("every discovery and action tool's example succeeds on a fixture-shaped world", async () => {
    const member = newUser();
    await earnThroughAgent(member, 1); // 100 pts: affords the 100 pts perk
    const rule = await platform.deps.db
      .selectFrom('event_rules')
      .select('id')
      .where('brand_id', '=', shop.brandId)
      .where('event_type', '=', 'earn')
      .executeTakeFirstOrThrow();
    const fixture: AgentFixture = {
      brandId: shop.brandId,
      otherBrandId: other.brandId,
      userId: member,
      perkId: perk.uuid,
      eventId: rule.id,
    };
    const all = [...discoveryTools(platform.services.agent.toolDeps), ...tools];
    for (const each of all) {
      const result = await invokeAgentTool(each, each.definition.example(fixture), contextOf(shopKey));
      expect(() => each.definition.result.parse(result), each.name).not.toThrow();
    }
    expect(all.map((each) => each.name).sort()).toEqual(
      [
        'browse_perks',
        'check_brand',
        'get_brand',
        'get_brand_perks',
        'get_leaderboard',
        'get_user_balance',
        'get_user_portfolio',
        'get_user_stats',
        'list_brands',
        'process_bulk_events',
        'process_event',
        'redeem_perk',
      ].sort(),
    );
  }, 60_000);
});
