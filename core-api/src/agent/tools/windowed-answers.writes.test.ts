import { randomUUID } from 'node:crypto';
import type { CreatedBrand } from '@pts/shared';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixtureKey } from '../../../test/agent-fixture.ts';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { testDatabaseKind } from '../../../test/database.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { createMemberAnswers, createMemberChangeFeed } from '../../modules/ledger/member-answers.ts';
import type { AgentPrincipal, AgentTool } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';
import { commerceTools } from './commerce.tools.ts';
import { discoveryTools } from './discovery.tools.ts';
import { intelligenceTools } from './intelligence.tools.ts';
import { rewardsTools } from './rewards.tools.ts';
import { createPerkViaAdmin, testPrincipal, toolCaller } from './tool-test-support.ts';

// The member tools newly kept by d.memberAnswers (docs/decisions.md, "Windowed member answers"): persona,
// recommendations, goals, find_deals for a member, route_commerce, stack_commerce and get_agent_rewards. For
// each, on both databases:
// 1. a repeated question is answered from memory: a write whose notice is suppressed (its table's triggers
//    disabled) changes the uncached computation but not the kept answer;
// 2. the next write that the database announces (the member's events, redemptions or streak, a perk's terms,
//    the key's events and claims) drops it, and the answer then equals the uncached computation.
// Raw SQL writes go, on PostgreSQL, through a connection of their own, as another process would write.

const PURCHASE = 40;
const MEMBER = 'window.member@example.com';
const OTHER = 'window.other@example.com';

let platform: TestPlatform;
let brand: CreatedBrand;
let elsewhere: CreatedBrand;
let key: AgentPrincipal;
let writer: pg.Client | undefined;
let wallet: string;
const perks: Record<string, number> = {};

const kept = toolCaller(
  () => platform,
  () => allTools(platform.services.agent.toolDeps),
);
/** The same tools over a memberAnswers that keeps nothing: the uncached computation. */
const uncached = toolCaller(
  () => platform,
  () =>
    allTools({
      ...platform.services.agent.toolDeps,
      memberAnswers: createMemberAnswers({
        clock: platform.clock,
        feed: createMemberChangeFeed(),
        maxEntries: 0,
        maxAgeMs: 0,
        chainHead: () => undefined,
      }),
    }),
);

function allTools(deps: AgentToolDeps): AgentTool[] {
  return [...intelligenceTools(deps), ...commerceTools(deps), ...rewardsTools(deps), ...discoveryTools(deps)];
}

/** A raw SQL write: on PostgreSQL from another connection (another process), on PGlite into the one instance. */
async function rawWrite(text: string, values: unknown[] = []): Promise<void> {
  if (writer) await writer.query(text, values);
  else await (platform.database.pglite as NonNullable<TestPlatform['database']['pglite']>).query(text, values);
}

/** `write` with `table`'s triggers disabled: the database announces nothing. */
async function silently(table: string, write: () => Promise<void>) {
  await rawWrite(`ALTER TABLE ${table} DISABLE TRIGGER USER`);
  try {
    await write();
  } finally {
    await rawWrite(`ALTER TABLE ${table} ENABLE TRIGGER USER`);
  }
}

/** A second ago by the platform's clock (the windows end at its now). */
const justBefore = () => new Date(platform.clock.now().getTime() - 1_000);

/** An accepted event of `user` at `brandId`, written in SQL (optionally brought by agent key `agentKeyId`). */
function rawEvent(user: string, brandId: string, reward: number, agentKeyId?: string) {
  return rawWrite(
    `INSERT INTO events (id, brand_id, event_type, user_email, status, metadata, reward_amount, created_at, sent_by)
     VALUES ($1, $2, 'purchase', $3, 'accepted', $4, $5, $6, $7)`,
    [
      randomUUID(),
      brandId,
      user,
      JSON.stringify(agentKeyId ? { agentKeyId } : {}),
      reward,
      justBefore(),
      agentKeyId ? `agent:${agentKeyId}` : 'brand',
    ],
  );
}

/**
 * A redemption of `perkId` by `user`, written in SQL: confirmed, or pending (its cost reserved in the wallet,
 * so the spendable balance the member answers judge with drops by it).
 */
function rawRedemption(
  user: string,
  brandId: string,
  perkId: number,
  cost: number,
  status: 'confirmed' | 'pending' = 'confirmed',
) {
  return rawWrite(
    `INSERT INTO perk_redemptions (id, brand_id, perk_id, user_key, platform, wallet_address, confirmation_code,
                                   status, cost, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'web', $5, $6, $9, $7, $8, $8)`,
    [randomUUID(), brandId, perkId, user, wallet, randomUUID(), cost, justBefore(), status],
  );
}

/** Polls `read` until `seen` holds (a notice travels through the listener: milliseconds on PostgreSQL). */
async function eventually<T>(read: () => Promise<T>, seen: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = await read();
    if (seen(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The whole check for one question: kept (a silent write is not seen, though the uncached computation sees
 * it), then dropped by `announced` and equal to the uncached computation again.
 */
async function keptUntilAnnounced(
  tool: string,
  raw: Parameters<typeof kept.call>[1],
  silent: () => Promise<void>,
  announced: () => Promise<void>,
) {
  await waitForMintsSettled(platform);
  // The notices of the last mint's confirmation reach the listener a moment after its commit.
  await new Promise((resolve) => setTimeout(resolve, 200));
  platform.services.memberAnswers.clear();
  const read = () => kept.call(tool, raw, key);
  const fresh = () => uncached.call(tool, raw, key);
  const before = await read();
  expect(platform.services.memberAnswers.keeping).toBe(true);
  expect(before).toEqual(await fresh());
  await silent();
  const moved = await fresh();
  expect(moved, `${tool}: the silent write changes the uncached answer`).not.toEqual(before);
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(await read(), `${tool}: kept, so the silent write is not seen`).toEqual(before);
  await announced();
  const after = await eventually(read, (value) => !same(value, before), `${tool} after an announced write`);
  expect(after).toEqual(await fresh());
  return { before, after };
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '10000',
    PTS_MINT_WAIT_MS: '0',
    // Windowed member answers are kept at most this long (and population aggregates remembered so long).
    PTS_AGENT_ANSWER_MAX_AGE_SECONDS: '300',
  });
  brand = await platform.createBrand({
    name: 'window',
    domain: 'window.example.com',
    rules: [
      { eventType: 'purchase', rewardAmount: PURCHASE, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'daily_checkin', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 },
    ],
  });
  elsewhere = await platform.createBrand({
    name: 'elsewhere',
    domain: 'elsewhere.example.com',
    rules: [{ eventType: 'purchase', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 }],
  });
  perks.mug = (await createPerkViaAdmin(platform, brand.brandId, { name: 'Mug', cost: 30, maxPerUser: 3 })).perkId;
  perks.cap = (await createPerkViaAdmin(platform, brand.brandId, { name: 'Cap', cost: 60, maxPerUser: 3 })).perkId;
  perks.far = (await createPerkViaAdmin(platform, elsewhere.brandId, { name: 'Far', cost: 20, maxPerUser: 10 })).perkId;
  const created = await createFixtureKey(platform, { name: 'window key', brandIds: [brand.brandId] });
  key = { ...testPrincipal([brand.brandId]), keyId: created.keyId };
  if (testDatabaseKind === 'postgres') {
    writer = new pg.Client({ connectionString: platform.database.url });
    await writer.connect();
  }
  for (const user of [MEMBER, OTHER]) {
    platform.clock.advance(61_000);
    const res = await platform.signedPost(
      '/pts-api/manual-event',
      { brandId: brand.brandId, eventType: 'purchase', userEmail: user, domain: 'window.example.com' },
      brand.securityKey,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  await waitForMintsSettled(platform);
  const row = await platform.deps.db
    .selectFrom('users')
    .select('wallet_address')
    .where('email', '=', MEMBER)
    .executeTakeFirstOrThrow();
  wallet = (row.wallet_address as string).toLowerCase();
}, 120_000);

afterAll(async () => {
  await writer?.end();
  await platform?.stop();
});

describe('windowed member answers: kept, and dropped by every write they depend on', () => {
  it('get_user_persona: a member event (the event pipeline) drops it', async () => {
    const { after } = await keptUntilAnnounced(
      'get_user_persona',
      { params: { userId: MEMBER } },
      () => silently('events', () => rawEvent(MEMBER, brand.brandId, PURCHASE)),
      async () => {
        platform.clock.advance(61_000);
        const res = await platform.signedPost(
          '/pts-api/manual-event',
          { brandId: brand.brandId, eventType: 'purchase', userEmail: MEMBER, domain: 'window.example.com' },
          brand.securityKey,
        );
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        // The window ends before now: a second later the announced event is in it.
        platform.clock.advance(1_000);
      },
    );
    // The silent event and the announced one are both in the answer now.
    expect(after.behaviour.events).toBe(3);
  });

  it("get_user_recommendations: a redemption drops it, and so does a perk's per-member limit", async () => {
    await keptUntilAnnounced(
      'get_user_recommendations',
      { params: { userId: MEMBER }, query: { limit: 5 } },
      () => silently('perk_redemptions', () => rawRedemption(MEMBER, brand.brandId, perks.mug as number, 30)),
      () => rawRedemption(MEMBER, brand.brandId, perks.mug as number, 30),
    );
    // The member holds 2 mugs: a limit of 2 takes the mug out of the recommendations.
    const { after } = await keptUntilAnnounced(
      'get_user_recommendations',
      { params: { userId: MEMBER }, query: { limit: 5 } },
      () => silently('perk_redemptions', () => rawRedemption(OTHER, brand.brandId, perks.cap as number, 60)),
      () => rawWrite('UPDATE perks SET max_per_user = 2 WHERE id = $1', [perks.mug]),
    );
    expect(after.recommendations.map((r: { perkId: string }) => r.perkId)).not.toContain(String(perks.mug));
  });

  it("get_user_goals: a member event drops it, and so does a perk's supply", async () => {
    await keptUntilAnnounced(
      'get_user_goals',
      { params: { userId: MEMBER } },
      () => silently('events', () => rawEvent(MEMBER, brand.brandId, 7)),
      () => rawEvent(MEMBER, brand.brandId, 7),
    );
    // The cap is sold once (by the other member): a supply of 1 sells it out.
    const { after } = await keptUntilAnnounced(
      'get_user_goals',
      { params: { userId: MEMBER } },
      () => silently('events', () => rawEvent(MEMBER, brand.brandId, 7)),
      () => rawWrite('UPDATE perks SET max_supply = 1 WHERE id = $1', [perks.cap]),
    );
    expect(after.goals.map((g: { perkId: string }) => g.perkId)).not.toContain(String(perks.cap));
  });

  it("find_deals for a member: a redemption drops it, and so does another brand's perk window", async () => {
    const raw = { query: { userId: MEMBER, limit: 10 } };
    // Pending: the balance find_deals judges with is the wallet's less what pending redemptions reserve.
    const reserve = () => rawRedemption(MEMBER, elsewhere.brandId, perks.far as number, 1, 'pending');
    await keptUntilAnnounced('find_deals', raw, () => silently('perk_redemptions', reserve), reserve);
    // A brand the key does not act for: its perks are deals too, and its window closing drops the answer.
    const { before, after } = await keptUntilAnnounced(
      'find_deals',
      raw,
      () => silently('perk_redemptions', reserve),
      () => rawWrite('UPDATE perks SET ends_at = $1 WHERE id = $2', [justBefore(), perks.far]),
    );
    expect(before.deals.map((deal: { id: number }) => deal.id)).toContain(perks.far);
    expect(after.deals.map((deal: { id: number }) => deal.id)).not.toContain(perks.far);
  });

  it("stack_commerce: a member's redemption drops it, and so does the brand's perk limit", async () => {
    // The member holds 2 mugs, at the limit of 2 set above: the mug is in none of the lists yet. The balance
    // stack_commerce judges with is the wallet's less pending redemptions (an event with no mint moves nothing).
    const raw = { query: { brandId: brand.brandId, purchaseAmount: '10', userId: MEMBER } };
    const reserve = () => rawRedemption(MEMBER, elsewhere.brandId, perks.far as number, 1, 'pending');
    await keptUntilAnnounced('stack_commerce', raw, () => silently('perk_redemptions', reserve), reserve);
    const { after } = await keptUntilAnnounced(
      'stack_commerce',
      raw,
      () => silently('perk_redemptions', reserve),
      () => rawWrite('UPDATE perks SET max_per_user = 3 WHERE id = $1', [perks.mug]),
    );
    const shown = [...after.perks.affordableNow, ...after.perks.unlockedByThisPurchase].map(
      (p: { id: number }) => p.id,
    );
    expect(shown).toContain(perks.mug);
  });

  it("route_commerce for a member: the member's streak drops it", async () => {
    const streak = (current: number) =>
      rawWrite(
        `INSERT INTO streaks (brand_id, user_key, streak_type, current, longest, last_activity_at, last_counted_day,
                              created_at, updated_at)
         VALUES ($1, $2, 'daily', $3, $3, $4, $5, now(), now())
         ON CONFLICT (brand_id, user_key, streak_type) DO UPDATE SET current = $3, longest = $3,
           last_activity_at = excluded.last_activity_at, last_counted_day = excluded.last_counted_day`,
        [brand.brandId, MEMBER, current, justBefore(), justBefore().toISOString().slice(0, 10)],
      );
    const { after } = await keptUntilAnnounced(
      'route_commerce',
      { query: { purchaseAmount: '10', userId: MEMBER } },
      () => silently('streaks', () => streak(1)),
      () => streak(2),
    );
    const route = after.routes.find((r: { brandId: string }) => r.brandId === brand.brandId);
    expect(route.member.streak.current).toBe(2);
  });

  it("get_brand_perks (public): a perk's terms drop it, and so does anyone's redemption", async () => {
    const raw = { params: { brandId: brand.brandId } };
    await keptUntilAnnounced(
      'get_brand_perks',
      raw,
      () => silently('perks', () => rawWrite('UPDATE perks SET cost = 31 WHERE id = $1', [perks.mug])),
      () => rawWrite('UPDATE perks SET max_per_user = 4 WHERE id = $1', [perks.mug]),
    );
    const { after } = await keptUntilAnnounced(
      'get_brand_perks',
      raw,
      () => silently('perks', () => rawWrite('UPDATE perks SET cost = 32 WHERE id = $1', [perks.mug])),
      () => rawRedemption(OTHER, brand.brandId, perks.cap as number, 60),
    );
    expect(after.perks.find((perk: { id: number }) => perk.id === perks.mug).cost).toBe(32);
  });

  it("get_agent_rewards: an event the key brought drops it, and so does the key's claim", async () => {
    await keptUntilAnnounced(
      'get_agent_rewards',
      {},
      () => silently('events', () => rawEvent(OTHER, brand.brandId, 1, key.keyId)),
      () => rawEvent(OTHER, brand.brandId, 1, key.keyId),
    );
    const { after } = await keptUntilAnnounced(
      'get_agent_rewards',
      {},
      () => silently('events', () => rawEvent(OTHER, brand.brandId, 1, key.keyId)),
      () =>
        rawWrite(
          `INSERT INTO agent_reward_claims (key_id, brand_id, reward_type, amount, event_id, claimed_at)
           VALUES ($1, $2, 'discovery', 100, $3, $4)`,
          [key.keyId, brand.brandId, randomUUID(), justBefore()],
        ),
    );
    expect(after.activity.acceptedEvents).toBe(3);
    expect(after.claims).toHaveLength(1);
  });

  it("get_leaderboard: a write to the brand's board drops it, and so does a display name or a username", async () => {
    const raw = { params: { brandId: brand.brandId }, query: { metric: 'pts_earned', period: 'all_time', limit: 10 } };
    const score = (user: string, value: number) =>
      rawWrite(
        `INSERT INTO leaderboard_scores (brand_id, metric, period, period_start, platform, user_key, value, updated_at)
         VALUES ($1, 'pts_earned', 'all_time', '1970-01-01', '*', $2, $3, now())
         ON CONFLICT DO NOTHING`,
        [brand.brandId, user, value],
      );
    await keptUntilAnnounced(
      'get_leaderboard',
      raw,
      () => silently('leaderboard_scores', () => score('board.one@example.com', 100_000)),
      () => score('board.two@example.com', 90_000),
    );
    await keptUntilAnnounced(
      'get_leaderboard',
      raw,
      () => silently('leaderboard_scores', () => score('board.three@example.com', 80_000)),
      () =>
        rawWrite(
          `INSERT INTO user_display_names (brand_id, user_key, display_name, updated_at) VALUES ($1, $2, 'Board One', now())`,
          [brand.brandId, 'board.one@example.com'],
        ),
    );
    const { after } = await keptUntilAnnounced(
      'get_leaderboard',
      raw,
      () => silently('leaderboard_scores', () => score('board.four@example.com', 70_000)),
      () =>
        rawWrite(
          `INSERT INTO oauth_identities (provider, subject, username, wallet_address, idp_user_id, created_at)
           VALUES ('discord', $1, 'someone', $2, $3, now())`,
          [randomUUID(), `0x${randomUUID().replaceAll('-', '').padEnd(40, '0')}`, randomUUID()],
        ),
    );
    expect(after.leaderboard.map((entry: { value: number }) => entry.value).slice(0, 4)).toEqual([
      100_000, 90_000, 80_000, 70_000,
    ]);
    // Another brand's board change does not drop it.
    const before = await kept.call('get_leaderboard', raw, key);
    await silently('leaderboard_scores', () => score('board.five@example.com', 60_000));
    await rawWrite(
      `INSERT INTO user_display_names (brand_id, user_key, display_name, updated_at) VALUES ($1, 'x@example.com', 'X', now())`,
      [elsewhere.brandId],
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await kept.call('get_leaderboard', raw, key)).toEqual(before);
  });
});
