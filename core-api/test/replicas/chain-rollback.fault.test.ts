import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CreatedBrand, signRequest } from '@pts/shared';
import { type Address, createPublicClient, http, parseAbiItem } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { type AnvilInstance, startAnvil } from '../../src/chain/anvil.ts';
import { rewardTokenAbi } from '../../src/chain/artifacts/index.ts';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../database.ts';
import { type Answer, type Core, call, replicaEnv, startCore, stopCore } from './cluster.ts';

// Issue 26, "Done when": a fault-injection run. Three core-api processes on one PostgreSQL and one external
// chain (an interval-mining anvil saving its state every second), with a finality depth the rollback is deeper
// than. Several clients send signed events throughout. The state file is copied (the "older state"), the load
// goes on, the chain is killed with SIGKILL, the load goes on while it is down (events are accepted and
// queued), the chain is started again from the older copy on the same port (every block since the copy is
// gone, confirmed mints with them), the load goes on a little, then stops. Once the ledger and the chain
// agree: every acknowledged reward is in the token's mint Transfer logs exactly once, the supply is the
// ledger's confirmed sum, and `/health`, `/readyz`, `/livez` were honest on every process throughout.
//
// Run alone: PTS_TEST_DB=postgres npx vitest run --project core-api test/replicas/chain-rollback.fault.test.ts

const ADMIN_TOKEN = `admin-${randomBytes(16).toString('hex')}`;
const FINALITY_DEPTH = 3;
const CLIENTS = 6;
/** Pause of each client between two events: a steady load the loaded 2-core CI machine can carry. */
const CLIENT_PAUSE_MS = 15;
const NEW_MEMBER_REWARD = 100n;
const VISIT_REWARD = 7n;
/** How long after the kill a live probe (`/pts-api/health`, `/readyz`) may still carry a ping started before it. */
const PROBE_GRACE_MS = 3_000;
/** How long after the kill a reconciler report from before the kill may still be shown (a pass every second). */
const LEDGER_GRACE_MS = 6_000;
const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
const ZERO = '0x0000000000000000000000000000000000000000';
const LOG_RANGE = 500n;

interface Ack {
  eventId: string;
  member: string;
  wallet: string;
  amount: bigint;
  mintStatus: string;
  transactionHash: string | undefined;
  core: string;
  startedAt: number;
  endedAt: number;
}

interface Sample {
  core: string;
  startedAt: number;
  endedAt: number;
  health: Answer;
  service: Answer;
  ready: Answer;
  minting: Answer;
  live: Answer;
  /** Wallets the ledger confirms more to than the chain holds, read right after the sample (when it said ok). */
  missingAfter?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, context = () => '') {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s\n${context()}`);
    await sleep(200);
  }
}

describe.runIf(testDatabaseKind === 'postgres')('the chain killed under load and restarted from an older state', () => {
  let anvil: AnvilInstance | undefined;
  let database: TestDatabase;
  const cores: Core[] = [];
  let workDir: string | undefined;

  afterAll(async () => {
    await Promise.all(cores.map((core) => stopCore(core, 'SIGTERM')));
    for (const core of cores) rmSync(core.dataDir, { recursive: true, force: true });
    await anvil?.stop();
    await database?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('finds every acknowledged reward on chain exactly once, with /health honest throughout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pts-chain-fault-'));
    workDir = dir;
    const stateFile = join(dir, 'anvil-state.json');
    const olderFile = join(dir, 'anvil-state-older.json');
    const chainAt = (port: number, state: string) =>
      startAnvil({ port, stateFile: state, stateIntervalSeconds: 1, blockTime: 1, homeDir: dir });
    anvil = await chainAt(0, stateFile);
    const port = anvil.port;
    const chain = createPublicClient({ transport: http(anvil.rpcUrl, { retryCount: 0 }) });
    database = await createTestDatabase();
    const env = {
      ...replicaEnv({ databaseUrl: database.url!, rpcUrl: anvil.rpcUrl, adminToken: ADMIN_TOKEN }),
      // A block every second; a mint is final 3 blocks down. The rollback below is deeper than that.
      PTS_MINT_FINALITY_DEPTH: String(FINALITY_DEPTH),
      PTS_MINT_FINALITY_TAG: 'latest',
      PTS_DB_POOL_SIZE: '8',
      PTS_RATE_LIMIT_IP_PER_MINUTE: '1000000',
      PTS_DUPLICATE_WINDOW_SECONDS: '0',
      PTS_MINTER_ELECTION_SECONDS: '1',
      PTS_RECEIPT_POLL_MS: '250',
      PTS_RECONCILE_INTERVAL_SECONDS: '1',
      PTS_MINT_STUCK_SECONDS: '3',
      PTS_MINT_WAIT_MS: '1000',
      PTS_REWARD_PROCESSOR_CRON: '*/2 * * * * *',
      LOG_LEVEL: 'warn',
    };
    const startingAt = performance.now();
    await Promise.all(['a', 'b', 'c'].map((name) => startCore(name, env, cores)));
    const startedAt = performance.now();
    const outputs = () => cores.map((core) => `--- ${core.name}\n${core.output().slice(-4000)}`).join('\n');
    const admin = (core: Core, method: string, path: string, body?: unknown) =>
      call(core, method, path, body, { authorization: `Bearer ${ADMIN_TOKEN}` });

    const created = await admin(cores[0]!, 'POST', '/admin/brands', { name: 'Fault', domain: 'fault.example' });
    expect(created.status).toBe(201);
    const brand = created.body.brand as CreatedBrand;
    const visitRule = { cooldownHours: 0, maxClaims: -1, rewardAmount: Number(VISIT_REWARD) };
    expect((await admin(cores[0]!, 'PUT', `/admin/brands/${brand.brandId}/rules/visit`, visitRule)).status).toBe(200);
    const token = (await call(cores[0]!, 'GET', '/pts-api/diagnostic')).body.contracts.rewardToken as Address;

    // ---- What the chain holds: mint Transfer logs over the whole chain, per wallet.
    async function mintsOnChain(): Promise<Map<string, bigint[]>> {
      const head = await chain.getBlockNumber({ cacheTime: 0 });
      const ranges: [bigint, bigint][] = [];
      for (let from = 0n; from <= head; from += LOG_RANGE) {
        ranges.push([from, from + LOG_RANGE - 1n < head ? from + LOG_RANGE - 1n : head]);
      }
      const pages = await Promise.all(
        ranges.map(([fromBlock, toBlock]) =>
          chain.getLogs({ address: token, event: transferEvent, args: { from: ZERO }, fromBlock, toBlock }),
        ),
      );
      const byWallet = new Map<string, bigint[]>();
      for (const log of pages.flat()) {
        const to = (log.args.to as Address).toLowerCase();
        byWallet.set(to, [...(byWallet.get(to) ?? []), log.args.value as bigint]);
      }
      return byWallet;
    }
    const balanceOf = (wallet: string) =>
      chain.readContract({ address: token, abi: rewardTokenAbi, functionName: 'balanceOf', args: [wallet as Address] });
    const ledgerRows = () =>
      database.db
        .selectFrom('reward_mints')
        .leftJoin('chain_txs', 'chain_txs.id', 'reward_mints.chain_tx_id')
        .select([
          'reward_mints.event_id',
          'reward_mints.wallet_address',
          'reward_mints.amount',
          'reward_mints.status',
          'chain_txs.block_number',
          'chain_txs.confirmed_by',
        ])
        .execute();
    const sum = (amounts: bigint[]) => amounts.reduce((total, amount) => total + amount, 0n);
    /** Wallets the ledger confirms more tokens to than the chain holds (logs, or the balance for a supply-confirmed mint). */
    async function confirmedButMissing(): Promise<string[]> {
      const rows = await ledgerRows();
      const onChain = await mintsOnChain();
      const confirmed = new Map<string, bigint>();
      for (const row of rows.filter((r) => r.status === 'confirmed')) {
        confirmed.set(row.wallet_address, (confirmed.get(row.wallet_address) ?? 0n) + BigInt(row.amount));
      }
      const short = [...confirmed].filter(([wallet, amount]) => sum(onChain.get(wallet) ?? []) < amount);
      const balances = await Promise.all(short.map(([wallet]) => balanceOf(wallet)));
      return short.filter(([, amount], i) => balances[i]! < amount).map(([wallet]) => wallet);
    }

    // ---- The load: CLIENTS concurrent clients sending signed events to the three processes in turn.
    const acks: Ack[] = [];
    const refused: { status: number; body: unknown; at: number }[] = [];
    let loading = true;
    async function client(c: number): Promise<void> {
      const members: string[] = [];
      for (let k = 0; loading; k++) {
        const joins = members.length === 0 || k % 3 === 0;
        const member = joins ? `m${c}-${k}@load.example` : members[k % members.length]!;
        const core = cores[(c + k) % cores.length]!;
        const raw = JSON.stringify({
          brandId: brand.brandId,
          eventType: joins ? 'account_creation' : 'visit',
          userEmail: member,
          externalId: `load-${c}-${k}`,
        });
        const path = '/pts-api/manual-event';
        const headers = signRequest({ securityKey: brand.securityKey, method: 'POST', pathWithQuery: path, body: raw });
        const startedAt = performance.now();
        const answer = await call(core, 'POST', path, JSON.parse(raw), headers);
        const endedAt = performance.now();
        if (answer.status === 200 && answer.body?.success === true && !answer.body.duplicate) {
          acks.push({
            eventId: answer.body.eventId,
            member,
            wallet: String(answer.body.walletAddress).toLowerCase(),
            amount: BigInt(answer.body.rewardAmount),
            mintStatus: answer.body.mintStatus,
            transactionHash: answer.body.transactionHash,
            core: core.name,
            startedAt,
            endedAt,
          });
          if (joins) members.push(member);
        } else {
          refused.push({ status: answer.status, body: answer.body, at: endedAt });
          const retryAfter = Number(answer.headers.get('retry-after') ?? 0);
          if (retryAfter > 0) await sleep(retryAfter * 1000);
        }
        await sleep(CLIENT_PAUSE_MS);
      }
    }

    // ---- Health, sampled on every process the whole time.
    const samples: Sample[] = [];
    let polling = true;
    let restartedAt: number | undefined;
    const sampleCore = async (core: Core): Promise<Sample> => {
      const startedAt = performance.now();
      const [health, service, ready, minting, live] = await Promise.all([
        call(core, 'GET', '/health'),
        call(core, 'GET', '/pts-api/health'),
        call(core, 'GET', '/readyz'),
        call(core, 'GET', '/readyz/minting'),
        call(core, 'GET', '/livez'),
      ]);
      return { core: core.name, startedAt, endedAt: performance.now(), health, service, ready, minting, live };
    };
    const poller = (async () => {
      while (polling) {
        const round = await Promise.all(cores.map(sampleCore));
        // After the restart, a report of `ok` is checked against the chain right away: the ledger must not
        // confirm a reward the chain lacks while any process says the two agree.
        if (restartedAt !== undefined && round.some((s) => s.health.body?.ledger?.status === 'ok')) {
          const missing = await confirmedButMissing().then(
            (wallets) => wallets.length,
            () => undefined,
          );
          for (const sample of round) if (missing !== undefined) sample.missingAfter = missing;
        }
        samples.push(...round);
        // Densest right after the restart, while the processes find out what the chain lost.
        const justRestarted = restartedAt !== undefined && performance.now() - restartedAt < 15_000;
        await sleep(justRestarted ? 50 : 300);
      }
    })();

    const loadStartedAt = performance.now();
    const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
    const context = () =>
      `acks ${acks.length}, refused ${refused.length} ${JSON.stringify(refused.slice(-3))}\n${outputs()}`;
    const confirmedTxBlocks = async () =>
      (
        await database.db
          .selectFrom('chain_txs')
          .select('block_number')
          .where('purpose', '=', 'mintBatch')
          .where('status', '=', 'confirmed')
          .execute()
      ).map((tx) => BigInt(tx.block_number ?? -1));

    // 1. Load until mints are confirmed (final), then copy a state file anvil has just written in full.
    await waitFor(
      'confirmed mints before the copy',
      async () => ((await confirmedTxBlocks()).length >= 3 ? true : undefined),
      60_000,
      context,
    );
    const copy = await waitFor(
      'a complete state dump to copy',
      async () => {
        const before = existsSync(stateFile) ? statSync(stateFile).mtimeMs : 0;
        await sleep(300);
        if (!existsSync(stateFile) || statSync(stateFile).mtimeMs === before) return undefined;
        // Written in place: copy once it has not changed for a moment, and only a copy that parses.
        await sleep(250);
        copyFileSync(stateFile, olderFile);
        try {
          const state = JSON.parse(readFileSync(olderFile, 'utf8')) as { best_block_number: number | string };
          return { head: BigInt(state.best_block_number), acks: acks.length };
        } catch {
          return undefined;
        }
      },
      30_000,
      context,
    );

    // 2. The load goes on until mints above the copy are final: the rollback will take confirmed rewards.
    const lostBlockAbove = copy.head + 2n;
    await waitFor(
      `a mint confirmed above block ${lostBlockAbove}`,
      async () => ((await confirmedTxBlocks()).some((block) => block > lostBlockAbove) ? true : undefined),
      60_000,
      context,
    );

    // 3. The chain dies without saving anything; the load goes on while it is down.
    const headAtKill = await chain.getBlockNumber({ cacheTime: 0 });
    process.kill(anvil.pid, 'SIGKILL');
    await anvil.stop();
    const killedAt = performance.now();
    const confirmedAtKill = (await ledgerRows()).filter((row) => row.status === 'confirmed');
    const acksAtKill = acks.length;
    await waitFor(
      'events accepted while the chain is down',
      async () =>
        performance.now() - killedAt > LEDGER_GRACE_MS + 4_000 &&
        acks.filter((ack) => ack.startedAt > killedAt).length >= 20
          ? true
          : undefined,
      60_000,
      context,
    );

    // 4. The chain comes back from the older copy, on the same port: every block since the copy is gone.
    const restartingAt = performance.now();
    copyFileSync(olderFile, stateFile);
    anvil = await chainAt(port, stateFile);
    restartedAt = performance.now();
    const headAfterRestart = await chain.getBlockNumber({ cacheTime: 0 });
    expect(headAfterRestart).toBeLessThan(headAtKill);
    // Rewards confirmed in blocks the copy does not hold (one block of margin: a dump may hold a block's
    // state without the block, chain/supply-witness.ts).
    const lostConfirmed = confirmedAtKill.filter((row) => BigInt(row.block_number ?? -1) > copy.head + 1n);
    expect(lostConfirmed.length, 'confirmed rewards the rollback took').toBeGreaterThan(0);

    // 5. A little more load, then none; wait (bounded) until the ledger and the chain agree everywhere.
    await waitFor(
      'events accepted after the restart',
      async () => (acks.filter((ack) => ack.startedAt > restartedAt!).length >= 20 ? true : undefined),
      60_000,
      context,
    );
    loading = false;
    await Promise.all(clients);
    const loadStoppedAt = performance.now();
    let last: { queue: Record<string, number>; reports: unknown[] } = { queue: {}, reports: [] };
    await waitFor(
      'the ledger and the chain agreeing on every process',
      async () => {
        const rows = await ledgerRows();
        const queue: Record<string, number> = {};
        for (const row of rows) queue[row.status] = (queue[row.status] ?? 0) + 1;
        const round = await Promise.all(cores.map(sampleCore));
        last = { queue, reports: round.map((s) => ({ core: s.core, ledger: s.health.body?.ledger })) };
        const open = (queue.pending ?? 0) + (queue.submitted ?? 0);
        const agreed = round.every(
          (s) => s.health.body?.ledger?.status === 'ok' && s.minting.status === 200 && s.service.status === 200,
        );
        return open === 0 && agreed ? true : undefined;
      },
      150_000,
      () => `${JSON.stringify(last, null, 1)}\n${outputs()}`,
    );
    const agreedAt = performance.now();
    polling = false;
    await poller;

    // ---- Every acknowledged reward exactly once: ledger rows, mint logs, balances, supply.
    const rows = await ledgerRows();
    const byEvent = new Map(rows.map((row) => [row.event_id, row]));
    expect(new Set(acks.map((ack) => ack.eventId)).size).toBe(acks.length);
    // Two rules: 100 for a new member, 7 for a visit of a known one (so wallets hold several mints).
    expect(new Set(acks.map((ack) => ack.amount))).toEqual(new Set([NEW_MEMBER_REWARD, VISIT_REWARD]));
    for (const ack of acks) {
      const row = byEvent.get(ack.eventId);
      expect(row, `ledger row of acknowledged event ${ack.eventId}`).toBeDefined();
      expect({ wallet: row!.wallet_address, amount: BigInt(row!.amount), status: row!.status }).toEqual({
        wallet: ack.wallet,
        amount: ack.amount,
        status: 'confirmed',
      });
    }
    expect(rows.filter((row) => row.status !== 'confirmed')).toEqual([]);
    expect(rows.length, 'ledger rows no client was told about').toBe(acks.length);
    const onChain = await mintsOnChain();
    // A batch confirmed by the supply rule (anvil's dump held its state but not its block) may have no log:
    // its wallets are left to the balances below, every other wallet's mints must match its ledger rows.
    const supplyConfirmed = rows.filter((row) => row.confirmed_by === 'supply');
    const supplyWallets = new Set(supplyConfirmed.map((row) => row.wallet_address));
    const multiset = (entries: [string, bigint][]) => {
      const byWallet = new Map<string, bigint[]>();
      for (const [wallet, amount] of entries) {
        if (!supplyWallets.has(wallet)) byWallet.set(wallet, [...(byWallet.get(wallet) ?? []), amount]);
      }
      return [...byWallet]
        .map(([wallet, amounts]) => `${wallet}:${amounts.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(',')}`)
        .sort();
    };
    // Exactly the acknowledged rewards, as a multiset per wallet: nothing lost, nothing minted twice, nothing else.
    expect(
      multiset(
        [...onChain].flatMap(([wallet, amounts]) => amounts.map((amount) => [wallet, amount] as [string, bigint])),
      ),
    ).toEqual(multiset(acks.map((ack) => [ack.wallet, ack.amount])));
    const perWallet = new Map<string, bigint>();
    for (const ack of acks) perWallet.set(ack.wallet, (perWallet.get(ack.wallet) ?? 0n) + ack.amount);
    const wallets = [...perWallet.keys()];
    const balances = await Promise.all(wallets.map(balanceOf));
    expect(
      wallets.filter((wallet, i) => balances[i] !== perWallet.get(wallet)),
      'wallets whose balance is not exactly their acknowledged rewards',
    ).toEqual([]);
    const supply = await chain.readContract({ address: token, abi: rewardTokenAbi, functionName: 'totalSupply' });
    expect(supply).toBe(sum(rows.map((row) => BigInt(row.amount))));
    expect(supply).toBe(sum(acks.map((ack) => ack.amount)));

    // ---- Accepted while the chain was down, and answered honestly: queued, no hash of a send that failed.
    const duringOutage = acks.filter((ack) => ack.startedAt > killedAt + PROBE_GRACE_MS && ack.endedAt < restartingAt);
    expect(duringOutage.length).toBeGreaterThan(0);
    expect(duringOutage.filter((ack) => ack.mintStatus !== 'pending' || ack.transactionHash)).toEqual([]);
    // No event failed for the chain's sake (a 503 `database_busy` with Retry-After is the honest answer of a
    // process whose connections are all taken on a loaded machine; the client retries).
    const busy = (answer: { status: number; body: unknown }) =>
      answer.status === 503 && (answer.body as { details?: { reason?: string } })?.details?.reason === 'database_busy';
    expect(refused.filter((answer) => !busy(answer))).toEqual([]);

    // ---- /health, /readyz, /livez honest throughout.
    for (const sample of samples) {
      expect(sample.live.status, `${sample.core} /livez`).toBe(200);
      // A load balancer follows /readyz: it follows the database alone (which answered all along, unless a
      // ping found every connection taken for 2 s), never the chain.
      expect(
        [sample.ready.status, sample.ready.body?.status],
        `${sample.core} /readyz with the database ${sample.ready.body?.database}`,
      ).toEqual(sample.ready.body?.database === 'connected' ? [200, 'ready'] : [503, 'not_ready']);
      expect(sample.health.status, `${sample.core} /health`).toBe(200);
    }
    const down = samples.filter((s) => s.startedAt > killedAt + PROBE_GRACE_MS && s.endedAt < restartingAt);
    // Every process stayed ready for events while the chain was down.
    for (const core of cores) expect(down.some((s) => s.core === core.name && s.ready.status === 200)).toBe(true);
    for (const sample of down) {
      expect(
        {
          service: [sample.service.status, sample.service.body?.services?.blockchain],
          minting: [sample.minting.status, sample.ready.body?.minting?.status],
        },
        `${sample.core} while the chain is down`,
      ).toEqual({ service: [503, 'disconnected'], minting: [503, 'queueing'] });
    }
    const downLong = down.filter((s) => s.startedAt > killedAt + LEDGER_GRACE_MS);
    expect(downLong.length).toBeGreaterThan(0);
    expect(
      downLong.filter((s) => s.health.body?.ledger?.status === 'ok').map((s) => s.core),
      'processes whose ledger report said ok while the chain was down',
    ).toEqual([]);
    const after = samples.filter((s) => s.startedAt > restartedAt!);
    expect(
      after
        .filter((s) => s.health.body?.ledger?.status === 'ok' && (s.missingAfter ?? 0) > 0)
        .map((s) => ({ core: s.core, at: Math.round(s.startedAt - restartedAt!), missing: s.missingAfter })),
      'reports of ok while the ledger confirmed rewards the chain lacked',
    ).toEqual([]);
    // The operator was told: some process reported the disagreement before it was repaired.
    expect(after.some((s) => ['drift', 'restoring'].includes(s.health.body?.ledger?.status))).toBe(true);
    for (const core of cores) {
      const body = (await call(core, 'GET', '/health')).body;
      expect(body.ledger, core.name).toMatchObject({ status: 'ok', missingOnChain: '0', unexpectedOnChain: '0' });
    }

    console.info(
      JSON.stringify({
        acknowledged: acks.length,
        acknowledgedBeforeCopy: copy.acks,
        acknowledgedBeforeKill: acksAtKill,
        acknowledgedWhileDown: acks.filter((a) => a.startedAt > killedAt && a.endedAt < restartingAt).length,
        confirmedRewardsLostByRollback: lostConfirmed.length,
        blocksLost: Number(headAtKill - copy.head),
        supplyConfirmedRewards: supplyConfirmed.length,
        refused: refused.length,
        healthSamples: samples.length,
        seconds: {
          start: Math.round((startedAt - startingAt) / 1000),
          load: Math.round((loadStoppedAt - loadStartedAt) / 1000),
          down: Math.round((restartingAt - killedAt) / 1000),
          agreementAfterLoad: Math.round((agreedAt - loadStoppedAt) / 1000),
        },
      }),
    );
  }, 480_000);
});
