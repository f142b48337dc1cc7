import { randomUUID } from 'node:crypto';
import type { CreatedBrand } from '@pts/shared';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { testDatabaseKind } from '../../../test/database.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import type { AgentPrincipal, AgentTool } from '../../agent/agent-tool.ts';
import { actionsTools } from '../../agent/tools/actions.tools.ts';
import { createPerkViaAdmin, testPrincipal, toolCaller } from '../../agent/tools/tool-test-support.ts';

// Every write that moves a member's figures drops the member's kept answers (member-answers.ts), on both
// databases: through the platform's own paths (an accepted event, its mint confirmed) and as raw SQL — on
// PostgreSQL through a connection of its own, as another process would write. Each write is checked on a
// kept answer: the answer before the write is first shown to come from memory.

const REWARD = 50;
const MEMBER = 'cached.member@example.com';
const OTHER_IDENTITY = 'discord_4242@pts.example';

let platform: TestPlatform;
let brand: CreatedBrand;
let tools: AgentTool[];
let key: AgentPrincipal;
let writer: pg.Client | undefined;
const caller = toolCaller(
  () => platform,
  () => tools,
);

/** A raw SQL write: on PostgreSQL from another connection (another process), on PGlite into the one instance. */
async function rawWrite(text: string, values: unknown[] = []): Promise<void> {
  if (writer) await writer.query(text, values);
  else await (platform.database.pglite as NonNullable<TestPlatform['database']['pglite']>).query(text, values);
}

const params = () => ({ userId: MEMBER, brandId: brand.brandId });
const stats = () => caller.call('get_user_stats', { params: params() }, key);
const balance = () => caller.call('get_user_balance', { params: params() }, key);
const portfolio = () => caller.call('get_user_portfolio', { params: { userId: MEMBER } }, key);

async function purchase(identityKey: string) {
  // Past the duplicate window of the same event type.
  platform.clock.advance(61_000);
  const res = await platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType: 'purchase', userEmail: identityKey, domain: 'cache.example.com' },
    brand.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
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

/** Asks twice: the second answer must come from memory (proven by a write whose notice is suppressed). */
async function expectKept(read: () => Promise<unknown>) {
  const first = await read();
  expect(platform.services.memberAnswers.keeping).toBe(true);
  expect(await read()).toEqual(first);
  return first;
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '10000',
    PTS_MINT_WAIT_MS: '0',
    PTS_AGENT_ANSWER_MAX_AGE_SECONDS: '0',
  });
  brand = await platform.createBrand({
    name: 'cache',
    domain: 'cache.example.com',
    rules: [{ eventType: 'purchase', rewardAmount: REWARD, cooldownHours: 0, maxClaims: -1 }],
  });
  tools = actionsTools(platform.services.agent.toolDeps);
  key = testPrincipal([brand.brandId]);
  if (testDatabaseKind === 'postgres') {
    writer = new pg.Client({ connectionString: platform.database.url });
    await writer.connect();
  }
  await purchase(MEMBER);
  // The first mint confirmed: the wallet holds its pts and no mint is in flight.
  await eventually(balance, (b) => b.balance === REWARD && b.pending === 0, 'first mint');
  await eventually(stats, (s) => s.earnings.pendingEarned === 0, 'first mint confirmed');
}, 120_000);

afterAll(async () => {
  await writer?.end();
  await platform?.stop();
});

describe('kept member answers', () => {
  it('are served from memory: a write whose notice is suppressed is not seen', async () => {
    const before = await expectKept(stats);
    await rawWrite('ALTER TABLE achievement_unlocks DISABLE TRIGGER USER');
    try {
      await rawWrite(
        `INSERT INTO achievement_unlocks (brand_id, user_key, achievement_id, type, threshold, name, unlocked_at)
         VALUES ($1, $2, 'silent', 'events', 1, 'Silent', now())`,
        [brand.brandId, MEMBER],
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await stats()).toEqual(before);
    } finally {
      await rawWrite('ALTER TABLE achievement_unlocks ENABLE TRIGGER USER');
    }
    // The next write that touches the member drops the answer; the silent unlock shows with it.
    await rawWrite(
      `INSERT INTO achievement_unlocks (brand_id, user_key, achievement_id, type, threshold, name, unlocked_at)
       VALUES ($1, $2, 'loud', 'events', 1, 'Loud', now())`,
      [brand.brandId, MEMBER],
    );
    const after = await eventually(
      stats,
      (s) => s.achievements.items.some((item: { id: string }) => item.id === 'loud'),
      'after a notified unlock',
    );
    expect(after.achievements.items.map((item: { id: string }) => item.id)).toContain('silent');
  });

  it('an accepted event (the event pipeline) changes stats, balance and portfolio', async () => {
    const [s, b, p] = await Promise.all([expectKept(stats), expectKept(balance), expectKept(portfolio)]);
    const earned = (s as { earnings: { totalEarned: number } }).earnings.totalEarned;
    await purchase(MEMBER);
    await eventually(stats, (next) => next.earnings.totalEarned === earned + REWARD, 'stats after an event');
    await eventually(balance, (next) => next.totalEarned === earned + REWARD, 'balance after an event');
    await eventually(portfolio, (next) => next.brands[0].totalEarned === earned + REWARD, 'portfolio after an event');
    expect(b).toBeDefined();
    expect(p).toBeDefined();
  });

  it("the event's mint confirmed (reward mints and the chain head) moves pending into the balance and stats", async () => {
    const before = (await stats()) as { earnings: { totalEarned: number } };
    await purchase(MEMBER);
    // Read (and kept) while the mint is on its way, most likely: only the mint's notices move it on.
    await eventually(stats, (s) => s.earnings.totalEarned === before.earnings.totalEarned + REWARD, 'stats: event');
    await eventually(balance, (b) => b.pending === 0 && b.balance === b.totalEarned, 'balance: mint mined');
    await eventually(stats, (s) => s.earnings.pendingEarned === 0, 'stats: mint confirmed');
    await eventually(balance, (b) => b.confirmedEarned === b.totalEarned, 'balance: mint confirmed');
  });

  it('a redemption changes stats', async () => {
    const perk = await createPerkViaAdmin(platform, brand.brandId, { name: 'Mug', cost: 10 });
    const before = await expectKept(stats);
    const wallet = (await balance()).walletAddress as string;
    await rawWrite(
      `INSERT INTO perk_redemptions (id, brand_id, perk_id, user_key, platform, wallet_address, confirmation_code,
                                     status, cost)
       VALUES ($1, $2, $3, $4, 'web', $5, $6, 'confirmed', 10)`,
      [randomUUID(), brand.brandId, perk.perkId, MEMBER, wallet.toLowerCase(), randomUUID()],
    );
    const after = await eventually(stats, (s) => s.redemptions.count === 1, 'stats after a redemption');
    expect(after.redemptions.totalRedeemed).toBe(10);
    expect(before).not.toEqual(after);
  });

  it('a streak check-in changes stats', async () => {
    await expectKept(stats);
    await rawWrite(
      `INSERT INTO streaks (brand_id, user_key, streak_type, current, longest, last_activity_at, last_counted_day,
                            created_at, updated_at)
       VALUES ($1, $2, 'daily', 1, 1, $3, $4, now(), now())
       ON CONFLICT (brand_id, user_key, streak_type) DO UPDATE SET current = 1, longest = 1,
         last_activity_at = excluded.last_activity_at, last_counted_day = excluded.last_counted_day`,
      [brand.brandId, MEMBER, platform.clock.now(), platform.clock.now().toISOString().slice(0, 10)],
    );
    await eventually(stats, (s) => s.streak.current === 1, 'stats after a check-in');
  });

  it('an achievement unlock changes stats', async () => {
    const before = (await expectKept(stats)) as { achievements: { unlocked: number } };
    await rawWrite(
      `INSERT INTO achievement_unlocks (brand_id, user_key, achievement_id, type, threshold, name, unlocked_at)
       VALUES ($1, $2, 'first', 'events', 1, 'First', now())`,
      [brand.brandId, MEMBER],
    );
    await eventually(
      stats,
      (s) => s.achievements.unlocked === before.achievements.unlocked + 1,
      'stats after an unlock',
    );
  });

  it("an account link adds the linked identity's earnings", async () => {
    await purchase(OTHER_IDENTITY);
    const before = (await expectKept(stats)) as { earnings: { totalEarned: number } };
    await rawWrite(
      `INSERT INTO account_links (identity_key, account_key, method, brand_id, linked_at)
       VALUES ($1, $2, 'email', $3, now())`,
      [OTHER_IDENTITY, MEMBER, brand.brandId],
    );
    await eventually(
      stats,
      (s) => s.earnings.totalEarned === before.earnings.totalEarned + REWARD,
      'stats after a link',
    );
  });

  it("a member's wallet change changes the balance", async () => {
    await expectKept(balance);
    const wallet = `0x${'ab'.repeat(20)}`;
    await rawWrite('UPDATE users SET wallet_address = $1 WHERE email = $2', [wallet, MEMBER]);
    await eventually(balance, (b) => b.walletAddress?.toLowerCase() === wallet, 'balance after a wallet change');
  });

  it('a statement touching many members: notices chunked under the payload limit, or everything dropped', async () => {
    /** An unlock written with its notice suppressed: only a drop by another notice makes it visible. */
    const silentUnlock = async (id: string) => {
      // An earlier test's mint confirming between the two reads would rightly drop the kept answer.
      await waitForMintsSettled(platform);
      await expectKept(stats);
      await rawWrite('ALTER TABLE achievement_unlocks DISABLE TRIGGER USER');
      try {
        await rawWrite(
          `INSERT INTO achievement_unlocks (brand_id, user_key, achievement_id, type, threshold, name, unlocked_at)
           VALUES ($1, $2, $3, 'events', 1, $3, now())`,
          [brand.brandId, MEMBER, id],
        );
      } finally {
        await rawWrite('ALTER TABLE achievement_unlocks ENABLE TRIGGER USER');
      }
    };
    const shows = (id: string) => (s: { achievements: { items: { id: string }[] } }) =>
      s.achievements.items.some((item) => item.id === id);
    // 600 members and wallets in one statement: more than one 8000-byte notice; the member is in one of them.
    await rawWrite(
      `INSERT INTO users (email, wallet_address)
       SELECT 'bulk-' || g || '@example.com', '0x' || lpad(to_hex(g), 40, '0') FROM generate_series(1, 599) g`,
    );
    await silentUnlock('bulk-chunked');
    await rawWrite(`UPDATE users SET idp_user_id = idp_user_id WHERE email LIKE 'bulk-%' OR email = $1`, [MEMBER]);
    await eventually(stats, shows('bulk-chunked'), 'after a 600-member statement');
    // Past 2000 tokens the notice says "everything".
    await rawWrite(`INSERT INTO users (email) SELECT 'huge-' || g || '@example.com' FROM generate_series(1, 2100) g`);
    await silentUnlock('bulk-everything');
    await rawWrite(`DELETE FROM users WHERE email LIKE 'huge-%'`);
    await eventually(stats, shows('bulk-everything'), 'after a 2100-member statement');
  });

  it.runIf(testDatabaseKind === 'postgres')(
    'is bypassed while the listener is down, and keeps answers again once it reconnects',
    async () => {
      await expectKept(stats);
      const admin = new pg.Client({ connectionString: platform.database.url });
      await admin.connect();
      try {
        const { rowCount } = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND query LIKE 'LISTEN%pts_member_changes%'`,
        );
        expect(rowCount).toBe(1);
      } finally {
        await admin.end();
      }
      await eventually(
        async () => platform.services.memberAnswers.keeping,
        (keeping) => !keeping,
        'the cache to notice',
      );
      // With every notice of this table suppressed, only a read of the database can see the write.
      await rawWrite('ALTER TABLE achievement_unlocks DISABLE TRIGGER USER');
      try {
        await rawWrite(
          `INSERT INTO achievement_unlocks (brand_id, user_key, achievement_id, type, threshold, name, unlocked_at)
           VALUES ($1, $2, 'while-down', 'events', 1, 'While down', now())`,
          [brand.brandId, MEMBER],
        );
        // Read afresh while down; or, if the listener is back already, its reconnection dropped everything.
        const seen = await stats();
        expect(seen.achievements.items.map((item: { id: string }) => item.id)).toContain('while-down');
      } finally {
        await rawWrite('ALTER TABLE achievement_unlocks ENABLE TRIGGER USER');
      }
      await eventually(
        async () => platform.services.memberAnswers.keeping,
        (keeping) => keeping,
        'the listener to reconnect',
      );
      await expectKept(stats);
    },
  );
});
