import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { type CreatedBrand, signRequest } from '@pts/shared';
import { createPublicClient, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnvilInstance, startAnvil } from '../../src/chain/anvil.ts';
import { rewardTokenAbi } from '../../src/chain/artifacts/index.ts';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../database.ts';
import { type Answer, type Core, call, replicaEnv, startCore as startReplica, stopCore } from './cluster.ts';

// Three real core-api processes (`node --import tsx src/main.ts`) on one PostgreSQL database and one chain,
// as docker-compose.yml runs replicas: shared rate limits, brand changes heard by every process at once,
// one reward for identical concurrent events, and minting handed over when the signing process dies.

// Every event of a brand counts, signed or not: each test's brand stays under it but for the limit test's.
const BRAND_LIMIT = 40;
const ADMIN_TOKEN = `admin-${randomBytes(16).toString('hex')}`;

let anvil: AnvilInstance;
let database: TestDatabase;
let env: Record<string, string>;
const cores: Core[] = [];

async function startCore(name: string): Promise<Core> {
  return startReplica(name, env, cores);
}

const admin = (core: Core, method: string, path: string, body?: unknown) =>
  call(core, method, path, body, { authorization: `Bearer ${ADMIN_TOKEN}` });

function signedEvent(core: Core, brand: CreatedBrand, body: Record<string, unknown>): Promise<Answer> {
  const raw = JSON.stringify({ brandId: brand.brandId, ...body });
  const path = '/pts-api/manual-event';
  const headers = signRequest({ securityKey: brand.securityKey, method: 'POST', pathWithQuery: path, body: raw });
  return fetch(`${core.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: raw,
  }).then(async (res) => ({ status: res.status, headers: res.headers, body: await res.json() }));
}

const event = (core: Core, brand: CreatedBrand, domain: string, eventType: string, identityKey: string) =>
  call(core, 'POST', '/pts-api/manual-event', { brandId: brand.brandId, eventType, userEmail: identityKey, domain });

/** The process that holds the minter signer lock: the only one whose process-pending runs. */
async function findLeaders(among: Core[]): Promise<Core[]> {
  const answers = await Promise.all(among.map((core) => admin(core, 'POST', '/reward-processor/process-pending')));
  for (const answer of answers) expect([200, 503]).toContain(answer.status);
  return among.filter((_, i) => answers[i]!.status === 200);
}

async function createBrand(domain: string): Promise<CreatedBrand> {
  const created = await admin(cores[0]!, 'POST', '/admin/brands', { name: `Brand ${domain}`, domain });
  expect(created.status).toBe(201);
  return created.body.brand as CreatedBrand;
}

/** Waits until no reward row is open, asking the leader to drive them; returns the queue. */
async function settle(leader: Core, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await admin(leader, 'POST', '/reward-processor/process-pending');
    const queue = (await call(leader, 'GET', '/reward-processor/queue')).body as Record<string, number>;
    if (queue.pending === 0 && queue.submitted === 0) return queue;
    if (Date.now() > deadline) throw new Error(`rewards still open: ${JSON.stringify(queue)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.runIf(testDatabaseKind === 'postgres')('three core-api processes on one PostgreSQL', () => {
  beforeAll(async () => {
    anvil = await startAnvil({ port: 0 });
    database = await createTestDatabase();
    env = {
      ...replicaEnv({ databaseUrl: database.url!, rpcUrl: anvil.rpcUrl, adminToken: ADMIN_TOKEN }),
      PTS_DB_POOL_SIZE: '8',
      PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
      PTS_RATE_LIMIT_BRAND_PER_MINUTE: String(BRAND_LIMIT),
      // Long enough that only a notice from another process can make a cached rule change in this test.
      PTS_RULE_CACHE_SECONDS: '600',
      PTS_MINTER_ELECTION_SECONDS: '0.5',
      PTS_RECEIPT_POLL_MS: '100',
      LOG_LEVEL: 'error',
    };
    // Started together: one deploys the contracts (under a startup lock), the other two find them recorded.
    await Promise.all([startCore('a'), startCore('b'), startCore('c')]);
    await tokenAddress();
  }, 240_000);

  afterAll(async () => {
    await Promise.all(cores.map((core) => stopCore(core, 'SIGTERM')));
    for (const core of cores) rmSync(core.dataDir, { recursive: true, force: true });
    await anvil?.stop();
    await database?.close();
  });

  it('deploys the contracts once and elects exactly one minter', async () => {
    const tokens = await Promise.all(
      cores.map(async (core) => (await call(core, 'GET', '/pts-api/diagnostic')).body.contracts.rewardToken),
    );
    expect(new Set(tokens).size).toBe(1);
    expect(await findLeaders(cores)).toHaveLength(1);
  });

  it(`holds a brand limit of ${BRAND_LIMIT} per minute across the three`, async () => {
    const brand = await createBrand('limit.example');
    const answers = await Promise.all(
      Array.from({ length: BRAND_LIMIT * 3 }, (_, i) =>
        signedEvent(cores[i % 3]!, brand, { eventType: 'form_submit', userEmail: `limit${i}@example.com` }),
      ),
    );
    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    // 40 in all, not 40 per process: each process sent 40, so a limit counted per process would accept 120.
    // Which process's requests take the 40 is a race (a process whose 40 arrive together sends them as one
    // grouped upsert and may take the whole window), so no per-process share is asserted.
    expect(accepted).toHaveLength(BRAND_LIMIT);
    expect(refused).toHaveLength(BRAND_LIMIT * 2);
    for (const answer of refused) {
      expect(answer.body).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { reason: 'rate_limit_exceeded' } });
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(answer.headers.get('x-ratelimit-limit')).toBe(String(BRAND_LIMIT));
      expect(answer.headers.get('x-ratelimit-remaining')).toBe('0');
    }
  });

  it('honours a rule changed through one process on the other two within a second', async () => {
    const brand = await createBrand('rules.example');
    const rule = { cooldownHours: 0, maxClaims: -1 };
    expect(
      (await admin(cores[0]!, 'PUT', `/admin/brands/${brand.brandId}/rules/visit`, { ...rule, rewardAmount: 10 }))
        .status,
    ).toBe(200);
    // Every process caches the rule (for 600 s) by using it.
    for (const core of cores) {
      const answer = await event(core, brand, 'rules.example', 'visit', `warm-${core.name}@example.com`);
      expect(answer.status).toBe(200);
      expect(answer.body.rewardAmount).toBe(10);
    }
    const changed = await admin(cores[0]!, 'PUT', `/admin/brands/${brand.brandId}/rules/visit`, {
      ...rule,
      rewardAmount: 25,
    });
    expect(changed.status).toBe(200);
    const changedAt = Date.now();
    for (const core of cores.slice(1)) {
      let amount: number | undefined;
      for (let i = 0; amount !== 25; i++) {
        const answer = await event(core, brand, 'rules.example', 'visit', `after-${core.name}-${i}@example.com`);
        expect(answer.status).toBe(200);
        amount = answer.body.rewardAmount;
        if (amount !== 25 && Date.now() - changedAt > 1_000) {
          throw new Error(`${core.name} still rewards ${amount} one second after the change`);
        }
        if (amount !== 25) await new Promise((r) => setTimeout(r, 20));
      }
    }
    // A rule switched off is refused everywhere too.
    expect(
      (
        await admin(cores[1]!, 'PUT', `/admin/brands/${brand.brandId}/rules/visit`, {
          ...rule,
          rewardAmount: 25,
          active: false,
        })
      ).status,
    ).toBe(200);
    await new Promise((r) => setTimeout(r, 1_000));
    for (const core of [cores[0]!, cores[2]!]) {
      const answer = await event(core, brand, 'rules.example', 'visit', `off-${core.name}@example.com`);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
    }
  });

  it('gives 50 identical concurrent events spread over the three one reward and one mint', async () => {
    const brand = await createBrand('race.example');
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        event(cores[i % 3]!, brand, 'race.example', 'account_creation', 'racer@example.com'),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.every((s) => s === 200 || s === 409 || s === 429)).toBe(true);
    const winner = answers.find((a) => a.status === 200)!;
    const [leader] = await findLeaders(cores);
    await settle(leader!);
    const mints = await database.db
      .selectFrom('reward_mints')
      .selectAll()
      .where('wallet_address', '=', winner.body.walletAddress)
      .execute();
    expect(mints).toHaveLength(1);
    expect(mints[0]!.status).toBe('confirmed');
    expect(await balanceOf(winner.body.walletAddress)).toBe(100n);
  });

  it("hands minting to another process when the minter's process is killed, losing and doubling nothing", async () => {
    const brand = await createBrand('handoff.example');
    const [leader] = await findLeaders(cores);
    const followers = cores.filter((core) => core !== leader);
    // Rewards accepted by every process; the followers' wait, committed, for the leader to mint them.
    const inFlight = Array.from({ length: 36 }, (_, i) =>
      event(cores[i % 3]!, brand, 'handoff.example', 'account_creation', `handoff${i}@example.com`),
    );
    const killBy = Date.now() + 30_000;
    for (;;) {
      const queue = (await call(leader!, 'GET', '/reward-processor/queue')).body as Record<string, number>;
      if ((queue.pending ?? 0) >= 5) break;
      if (Date.now() > killBy) throw new Error(`no rewards became pending: ${JSON.stringify(queue)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await stopCore(leader!, 'SIGKILL');
    const answers = await Promise.all(inFlight);
    const rewarded = answers.filter((a) => a.status === 200);
    // The followers answered all of theirs; the leader's were cut off or answered before the kill.
    expect(rewarded.length).toBeGreaterThanOrEqual(24);

    // The advisory lock went with the dead process's session: one survivor takes it.
    let successors: Core[] = [];
    const electBy = Date.now() + 20_000;
    while (successors.length === 0) {
      if (Date.now() > electBy) throw new Error('no process took over minting');
      await new Promise((r) => setTimeout(r, 250));
      successors = await findLeaders(followers);
    }
    expect(successors).toHaveLength(1);
    const queue = await settle(successors[0]!);
    expect(queue.failed ?? 0).toBe(0);

    const rows = await database.db
      .selectFrom('reward_mints')
      .select(['wallet_address', 'status'])
      .where('brand_id', '=', brand.brandId)
      .execute();
    // Every acknowledged reward is a row, each wallet has one, and all were confirmed.
    const wallets = new Set(rows.map((row) => row.wallet_address));
    expect(wallets.size).toBe(rows.length);
    for (const answer of rewarded) expect(wallets.has(answer.body.walletAddress)).toBe(true);
    expect(rows.every((row) => row.status === 'confirmed')).toBe(true);
    // The chain agrees: each wallet holds exactly its one reward, and nothing else was minted.
    for (const row of rows) expect(await balanceOf(row.wallet_address)).toBe(100n);
    const confirmed = await database.db
      .selectFrom('reward_mints')
      .select((eb) => eb.fn.sum<string>('amount').as('total'))
      .where('status', '=', 'confirmed')
      .executeTakeFirstOrThrow();
    expect(await totalSupply()).toBe(BigInt(confirmed.total));
  });
});

let token: `0x${string}` | undefined;
async function tokenAddress(): Promise<`0x${string}`> {
  if (!token) {
    const diagnostic = await call(cores[0]!, 'GET', '/pts-api/diagnostic');
    token = diagnostic.body.contracts.rewardToken as `0x${string}`;
  }
  return token!;
}

async function balanceOf(wallet: string): Promise<bigint> {
  const client = createPublicClient({ transport: http(anvil.rpcUrl) });
  return client.readContract({
    address: await tokenAddress(),
    abi: rewardTokenAbi,
    functionName: 'balanceOf',
    args: [wallet as `0x${string}`],
  });
}

async function totalSupply(): Promise<bigint> {
  const client = createPublicClient({ transport: http(anvil.rpcUrl) });
  return client.readContract({ address: await tokenAddress(), abi: rewardTokenAbi, functionName: 'totalSupply' });
}
