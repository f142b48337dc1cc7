import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentKeyCredentials, agentRequest, createFixtureKey } from '../../../test/agent-fixture.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import type { AgentPrincipal, AgentTool } from '../agent-tool.ts';
import { actionsTools } from './actions.tools.ts';
import { programTools } from './program.tools.ts';
import { createPerkViaAdmin, toolCaller, UNKNOWN_BRAND } from './tool-test-support.ts';

// Program management on the real platform: rules through setRule (the admin API's service, the brand cache
// told), perks through createPerk/updatePerk (PerkNFT on anvil). Events then go through process_event.

let platform: TestPlatform;
let shop: CreatedBrand;
let other: CreatedBrand;
let tools: AgentTool[];
let userCount = 0;

const managerOf = (brandIds: string[], keyId = 'key-manager'): AgentPrincipal => ({
  keyId,
  name: keyId,
  brandIds,
  canManageProgram: true,
  canOnboard: false,
  tier: 'free',
  ratePerMinute: 20,
});
let manager: AgentPrincipal;

const caller = toolCaller(
  () => platform,
  () => tools,
);
const call = (name: string, raw: { params?: unknown; body?: unknown }) => caller.call(name, raw, manager);
const refused = (name: string, raw: { params?: unknown; body?: unknown }) => caller.invoke(name, raw, manager);
const newUser = () => `program-user${++userCount}@example.com`;

/**
 * One event through process_event. A new user needs no wait; a repeat waits out the duplicate window (61 s).
 * The brand cache lives 5 s (PTS_RULE_CACHE_SECONDS), so only calls without the wait prove that a change
 * reached the cache rather than outlived it.
 */
function sendEvent(eventType: string, userId?: string) {
  platform.clock.advance(userId ? 61_000 : 10);
  userId ??= newUser();
  return caller.invoke('process_event', { body: { brandId: shop.brandId, eventType, userId } }, manager);
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
  });
  tools = [...programTools(platform.services.agent.toolDeps), ...actionsTools(platform.services.agent.toolDeps)];
  shop = await platform.createBrand({ name: 'Program Shop', domain: 'program-shop.example.com' });
  other = await platform.createBrand({
    name: 'Program Other',
    domain: 'program-other.example.com',
    rules: [{ eventType: 'earn', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 }],
  });
  manager = managerOf([shop.brandId]);
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('create_brand_event', () => {
  it('creates a rule the event path honours at once; maxClaims 0 is unlimited, answered -1; audited under the key', async () => {
    // The brand cache has the brand without this rule: the creation must reach it.
    await expect(sendEvent('agent_visit')).rejects.toMatchObject({ code: 'UNKNOWN_EVENT_TYPE' });
    const rule = await call('create_brand_event', {
      params: { brandId: shop.brandId },
      body: { eventType: 'agent_visit', rewardAmount: 35, maxClaims: 0, cooldownHours: 0 },
    });
    expect(rule).toMatchObject({
      brandId: shop.brandId,
      eventType: 'agent_visit',
      rewardAmount: 35,
      maxClaims: -1,
      cooldownHours: 0,
      enabled: true,
    });
    const row = await platform.deps.db
      .selectFrom('event_rules')
      .selectAll()
      .where('id', '=', rule.eventId)
      .executeTakeFirstOrThrow();
    expect(row.max_claims_per_user).toBe(-1);
    // At once: the cache that just answered "unknown event type" was told.
    expect(await sendEvent('agent_visit')).toMatchObject({ rewardAmount: 35 });
    const user = newUser();
    // Unlimited: the same user is paid three times.
    for (let i = 0; i < 3; i++) expect(await sendEvent('agent_visit', user)).toMatchObject({ rewardAmount: 35 });
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .select(['actor', 'action'])
      .where('subject', '=', shop.brandId)
      .where('action', '=', 'rule.set')
      .execute();
    expect(audit).toContainEqual({ actor: 'agent:key-manager', action: 'rule.set' });
  });

  it('answers unlimited as -1 however it was given (-1, null), on create and update alike: what it takes back', async () => {
    for (const [eventType, maxClaims] of [
      ['agent_unlimited_minus', -1],
      ['agent_unlimited_null', null],
    ] as const) {
      const rule = await call('create_brand_event', {
        params: { brandId: shop.brandId },
        body: { eventType, rewardAmount: 1, maxClaims, cooldownHours: 0 },
      });
      expect(rule.maxClaims, String(maxClaims)).toBe(-1);
      const updated = await call('update_brand_event', {
        params: { brandId: shop.brandId, eventId: rule.eventId },
        body: { rewardAmount: 2 },
      });
      expect(updated.maxClaims).toBe(-1);
    }
  });

  it('keeps maxClaims and cooldownHours: a second claim inside the cooldown is refused', async () => {
    await call('create_brand_event', {
      params: { brandId: shop.brandId },
      body: { eventType: 'agent_once', rewardAmount: 5, maxClaims: 1, cooldownHours: 24 },
    });
    const user = newUser();
    expect(await sendEvent('agent_once', user)).toMatchObject({ rewardAmount: 5 });
    await expect(sendEvent('agent_once', user)).rejects.toMatchObject({ status: 429 });
  });

  it('answers 409 for an event type the brand already has', async () => {
    await expect(
      refused('create_brand_event', {
        params: { brandId: shop.brandId },
        body: { eventType: 'agent_visit', rewardAmount: 1, maxClaims: 0, cooldownHours: 0 },
      }),
    ).rejects.toMatchObject({ status: 409, code: 'CONFLICT' });
  });

  it('refuses malformed bodies with 400 naming the field, and unknown brands with 404', async () => {
    const base = { eventType: 'agent_bad', rewardAmount: 10, maxClaims: 0, cooldownHours: 0 };
    for (const [body, field] of [
      [{ ...base, eventType: 'has space' }, 'eventType'],
      [{ ...base, rewardAmount: 1.5 }, 'rewardAmount'],
      [{ ...base, rewardAmount: -1 }, 'rewardAmount'],
      [{ ...base, maxClaims: -2 }, 'maxClaims'],
      [{ ...base, maxClaims: 1.5 }, 'maxClaims'],
      [{ ...base, maxClaims: '-1' }, 'maxClaims'],
      [{ ...base, cooldownHours: 87_601 }, 'cooldownHours'],
      [{ ...base, cooldownHours: undefined }, 'cooldownHours'],
    ] as const) {
      await expect(
        refused('create_brand_event', { params: { brandId: shop.brandId }, body }),
        JSON.stringify(body),
      ).rejects.toMatchObject({ status: 400, message: expect.stringContaining(field) });
    }
    await expect(refused('create_brand_event', { params: { brandId: 'shop' }, body: base })).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      caller.invoke(
        'create_brand_event',
        { params: { brandId: UNKNOWN_BRAND }, body: base },
        managerOf([UNKNOWN_BRAND]),
      ),
    ).rejects.toMatchObject({ status: 404 });
  });
});

describe('unlimited is -1 (or null) on every limit input', () => {
  it('create_brand_event takes maxClaims -1 (what suggest_brand_events gives) and null as unlimited', async () => {
    for (const [eventType, maxClaims] of [
      ['agent_unlimited_a', -1],
      ['agent_unlimited_b', null],
    ] as const) {
      const rule = await call('create_brand_event', {
        params: { brandId: shop.brandId },
        body: { eventType, rewardAmount: 5, maxClaims, cooldownHours: 0 },
      });
      expect(rule).toMatchObject({ eventType, maxClaims: -1 });
      const stored = await platform.deps.db
        .selectFrom('event_rules')
        .select('max_claims_per_user')
        .where('brand_id', '=', shop.brandId)
        .where('event_type', '=', eventType)
        .executeTakeFirstOrThrow();
      expect(stored.max_claims_per_user).toBe(-1);
      // Unlimited indeed: the same member claims three times.
      const user = newUser();
      for (let i = 0; i < 3; i++) expect(await sendEvent(eventType, user)).toMatchObject({ success: true });
    }
    const limited = await call('create_brand_event', {
      params: { brandId: shop.brandId },
      body: { eventType: 'agent_twice', rewardAmount: 5, maxClaims: 2, cooldownHours: 0 },
    });
    expect(limited.maxClaims).toBe(2);
  });

  it('create_brand_perk and update_brand_perk take maxSupply and maxPerUser with the same spelling', async () => {
    const unlimited = await call('create_brand_perk', {
      params: { brandId: shop.brandId },
      body: { name: 'Unlimited stickers', priceInPoints: 1, maxSupply: -1, maxPerUser: -1 },
    });
    // Unlimited answers -1, the spelling it was given in (docs/decisions.md, "Agent API").
    expect(unlimited).toMatchObject({ maxSupply: -1, maxPerUser: -1 });
    // The answer goes back in as it is.
    const again = await call('update_brand_perk', {
      params: { brandId: shop.brandId, collectionId: String(unlimited.perkId) },
      body: { maxSupply: unlimited.maxSupply, maxPerUser: unlimited.maxPerUser },
    });
    expect(again).toMatchObject({ maxSupply: -1, maxPerUser: -1 });
    const nulls = await call('create_brand_perk', {
      params: { brandId: shop.brandId },
      body: { name: 'Null stickers', priceInPoints: 1, maxSupply: null, maxPerUser: null },
    });
    expect(nulls).toMatchObject({ maxSupply: -1, maxPerUser: -1 });
    const three = await call('create_brand_perk', {
      params: { brandId: shop.brandId },
      body: { name: 'Three per member', priceInPoints: 1, maxPerUser: 3 },
    });
    expect(three).toMatchObject({ maxSupply: -1, maxPerUser: 3 });
    const byDefault = await call('create_brand_perk', {
      params: { brandId: shop.brandId },
      body: { name: 'One per member', priceInPoints: 1 },
    });
    expect(byDefault.maxPerUser).toBe(1);
    // On chain too: the collection's per-user maximum is what the member may hold.
    const onChain = await platform.deps.perkChain?.getCollection(BigInt(three.perkId));
    expect(onChain?.maxPerUser).toBe(3n);
    const changed = await call('update_brand_perk', {
      params: { brandId: shop.brandId, collectionId: String(three.perkId) },
      body: { maxPerUser: -1, maxSupply: 40 },
    });
    expect(changed).toMatchObject({ maxPerUser: -1, maxSupply: 40, chainStatus: 'synced' });
    expect((await platform.deps.perkChain?.getCollection(BigInt(three.perkId)))?.maxPerUser).toBe(0n);
    const back = await call('update_brand_perk', {
      params: { brandId: shop.brandId, collectionId: String(three.perkId) },
      body: { maxPerUser: 2, maxSupply: null },
    });
    expect(back).toMatchObject({ maxPerUser: 2, maxSupply: -1 });
    for (const body of [{ maxPerUser: -2 }, { maxPerUser: 0.5 }, { maxSupply: 'lots' }]) {
      await expect(
        refused('update_brand_perk', { params: { brandId: shop.brandId, collectionId: String(three.perkId) }, body }),
        JSON.stringify(body),
      ).rejects.toMatchObject({ status: 400, message: expect.stringContaining(Object.keys(body)[0] as string) });
    }
  });
});

describe('redeem_perk with an idempotency key', () => {
  it('10 concurrent calls with one key make one redemption; the key for another perk is 409', async () => {
    const perk = await createPerkViaAdmin(platform, shop.brandId, { cost: 10, maxPerUser: 0 });
    const otherPerk = await createPerkViaAdmin(platform, shop.brandId, { cost: 10, maxPerUser: 0 });
    await call('create_brand_event', {
      params: { brandId: shop.brandId },
      body: { eventType: 'agent_topup', rewardAmount: 100, maxClaims: -1, cooldownHours: 0 },
    });
    const user = newUser();
    await sendEvent('agent_topup', user);
    const body = { perkId: perk.uuid, userId: user, brandId: shop.brandId, idempotencyKey: 'agent-order-7' };
    const answers = await Promise.all(Array.from({ length: 10 }, () => call('redeem_perk', { body })));
    expect(new Set(answers.map((a) => a.redemptionId)).size).toBe(1);
    expect(answers.filter((a) => a.replayed === true)).toHaveLength(9);
    const again = await call('redeem_perk', { body });
    expect(again).toMatchObject({ replayed: true, redemptionId: answers[0].redemptionId, status: 'confirmed' });
    await expect(refused('redeem_perk', { body: { ...body, perkId: otherPerk.uuid } })).rejects.toMatchObject({
      status: 409,
      details: { reason: 'idempotency_key_reused' },
    });
    const rows = await platform.deps.db
      .selectFrom('perk_redemptions')
      .select(['perk_id', 'status'])
      .where('user_key', '=', user)
      .execute();
    expect(rows).toEqual([{ perk_id: BigInt(perk.perkId), status: 'confirmed' }]);
  }, 90_000);
});

describe('update_brand_event', () => {
  it('changes the reward for the next event and keeps the other settings', async () => {
    const rule = await call('create_brand_event', {
      params: { brandId: shop.brandId },
      body: { eventType: 'agent_review', rewardAmount: 20, maxClaims: 3, cooldownHours: 0 },
    });
    expect(await sendEvent('agent_review')).toMatchObject({ rewardAmount: 20 });
    const updated = await call('update_brand_event', {
      params: { brandId: shop.brandId, eventId: rule.eventId },
      body: { rewardAmount: 45 },
    });
    expect(updated).toEqual({ ...rule, rewardAmount: 45 });
    expect(await sendEvent('agent_review')).toMatchObject({ rewardAmount: 45 });
  });

  it('enabled false refuses events at once; enabled true lets them in again', async () => {
    const rule = await call('create_brand_event', {
      params: { brandId: shop.brandId },
      body: { eventType: 'agent_share', rewardAmount: 15, maxClaims: 0, cooldownHours: 0 },
    });
    expect(await sendEvent('agent_share')).toMatchObject({ rewardAmount: 15 });
    const off = await call('update_brand_event', {
      params: { brandId: shop.brandId, eventId: rule.eventId },
      body: { enabled: false },
    });
    expect(off).toMatchObject({ enabled: false, rewardAmount: 15 });
    await expect(sendEvent('agent_share')).rejects.toMatchObject({ status: 400, code: 'UNKNOWN_EVENT_TYPE' });
    await call('update_brand_event', {
      params: { brandId: shop.brandId, eventId: rule.eventId },
      body: { enabled: true },
    });
    expect(await sendEvent('agent_share')).toMatchObject({ rewardAmount: 15 });
  });

  it('two concurrent updates of different fields both land', async () => {
    const rule = await call('create_brand_event', {
      params: { brandId: shop.brandId },
      body: { eventType: 'agent_race', rewardAmount: 10, maxClaims: 0, cooldownHours: 0 },
    });
    const params = { brandId: shop.brandId, eventId: rule.eventId };
    await Promise.all([
      call('update_brand_event', { params, body: { rewardAmount: 70 } }),
      call('update_brand_event', { params, body: { enabled: false } }),
    ]);
    const row = await platform.deps.db
      .selectFrom('event_rules')
      .select(['reward_amount', 'active'])
      .where('id', '=', rule.eventId)
      .executeTakeFirstOrThrow();
    expect({ reward: Number(row.reward_amount), active: row.active }).toEqual({ reward: 70, active: false });
  });

  it('404 for an eventId the brand does not have (another brand’s included); 400 for an empty body', async () => {
    const foreign = await platform.deps.db
      .selectFrom('event_rules')
      .select('id')
      .where('brand_id', '=', other.brandId)
      .executeTakeFirstOrThrow();
    for (const eventId of ['no-such-rule', foreign.id]) {
      await expect(
        refused('update_brand_event', { params: { brandId: shop.brandId, eventId }, body: { enabled: false } }),
      ).rejects.toMatchObject({ status: 404 });
    }
    await expect(
      refused('update_brand_event', { params: { brandId: shop.brandId, eventId: foreign.id }, body: {} }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('rewardAmount and/or enabled') });
  });
});

describe('create_brand_perk and update_brand_perk', () => {
  it('creates the perk and its collection; maxSupply 0 is unlimited; 409 for a name the brand has', async () => {
    const perk = await call('create_brand_perk', {
      params: { brandId: shop.brandId },
      body: { name: 'Free coffee', description: 'one cup', priceInPoints: 120, maxSupply: 0, category: 'Dining' },
    });
    expect(perk).toMatchObject({
      brandId: shop.brandId,
      name: 'Free coffee',
      description: 'one cup',
      priceInPoints: 120,
      cost: 120,
      maxSupply: -1,
      category: 'dining',
      isActive: true,
      chainStatus: 'synced',
    });
    expect(perk.collectionId).toBe(perk.perkId);
    const limited = await call('create_brand_perk', {
      params: { brandId: shop.brandId },
      body: { name: 'Tote bag', priceInPoints: 300, maxSupply: 50 },
    });
    expect(limited).toMatchObject({ maxSupply: 50, category: 'general', description: '' });
    await expect(
      refused('create_brand_perk', {
        params: { brandId: shop.brandId },
        body: { name: 'Free coffee', priceInPoints: 1 },
      }),
    ).rejects.toMatchObject({ status: 409 });
    for (const body of [
      { name: '', priceInPoints: 1 },
      { name: 'x', priceInPoints: -5 },
      { name: 'x', priceInPoints: 1, maxSupply: 1.5 },
      { name: 'x', priceInPoints: 1, category: 'Not OK!' },
    ]) {
      await expect(
        refused('create_brand_perk', { params: { brandId: shop.brandId }, body }),
        JSON.stringify(body),
      ).rejects.toMatchObject({ status: 400 });
    }
  });

  it('changes price and switch (by id or uuid); an inactive perk cannot be redeemed', async () => {
    const perk = await createPerkViaAdmin(platform, shop.brandId, { cost: 10, maxPerUser: 5 });
    const repriced = await call('update_brand_perk', {
      params: { brandId: shop.brandId, collectionId: String(perk.perkId) },
      body: { priceInPoints: 15 },
    });
    expect(repriced).toMatchObject({ perkId: perk.perkId, priceInPoints: 15, isActive: true, chainStatus: 'synced' });
    const off = await call('update_brand_perk', {
      params: { brandId: shop.brandId, collectionId: perk.uuid },
      body: { isActive: false },
    });
    expect(off).toMatchObject({ priceInPoints: 15, isActive: false });
    // A member with 100 pts tries to redeem it.
    const user = newUser();
    await call('create_brand_event', {
      params: { brandId: shop.brandId },
      body: { eventType: 'agent_buy', rewardAmount: 100, maxClaims: 0, cooldownHours: 0 },
    });
    await sendEvent('agent_buy', user);
    await expect(
      caller.invoke('redeem_perk', { body: { perkId: perk.uuid, userId: user, brandId: shop.brandId } }, manager),
    ).rejects.toMatchObject({ code: 'PERK_UNAVAILABLE', details: { reason: 'inactive' } });
    const redemptions = await platform.deps.db
      .selectFrom('perk_redemptions')
      .select('id')
      .where('perk_id', '=', BigInt(perk.perkId))
      .execute();
    expect(redemptions).toEqual([]);
  });

  it('404 for a perk of another brand or no perk; 400 for an empty body', async () => {
    const foreign = await createPerkViaAdmin(platform, other.brandId, { cost: 10 });
    for (const collectionId of [String(foreign.perkId), foreign.uuid, '999999']) {
      await expect(
        refused('update_brand_perk', { params: { brandId: shop.brandId, collectionId }, body: { isActive: false } }),
      ).rejects.toMatchObject({ status: 404 });
    }
    await expect(
      refused('update_brand_perk', { params: { brandId: shop.brandId, collectionId: '1' }, body: {} }),
    ).rejects.toMatchObject({ status: 400 });
  });
});

describe('access over HTTP', () => {
  let keys: { manage: AgentKeyCredentials; otherManager: AgentKeyCredentials; plain: AgentKeyCredentials };
  beforeAll(async () => {
    keys = {
      manage: await createFixtureKey(platform, { name: 'm', brandIds: [shop.brandId], canManageProgram: true }),
      otherManager: await createFixtureKey(platform, { name: 'o', brandIds: [other.brandId], canManageProgram: true }),
      plain: await createFixtureKey(platform, { name: 'p', brandIds: [shop.brandId] }),
    };
  });
  const request = (key?: AgentKeyCredentials) => {
    platform.clock.advance(1_000);
    return agentRequest(platform, {
      method: 'POST',
      path: `/brands/${shop.brandId}/events`,
      body: { eventType: `agent_http_${userCount++}`, rewardAmount: 1, maxClaims: 0, cooldownHours: 0 },
      ...(key ? { key } : {}),
    });
  };

  it('401 unsigned; 403 without canManageProgram or for a brand the key does not act for; 200 otherwise', async () => {
    expect((await request()).status).toBe(401);
    const plain = await request(keys.plain);
    expect(plain.status).toBe(403);
    expect(plain.body.error.code).toBe('forbidden');
    expect((await request(keys.otherManager)).status).toBe(403);
    const ok = await request(keys.manage);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.meta.tool).toBe('create_brand_event');
    const bad = await agentRequest(platform, {
      method: 'PATCH',
      path: `/brands/${shop.brandId}/events/${ok.body.data.eventId}`,
      body: { rewardAmount: 'ten' },
      key: keys.manage,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation');
  });
});
