/**
 * `npm run bench -- replicas [--processes 10] [--clients 20] [--seconds 30]`
 *
 * Ten core-api processes (by default) on one PostgreSQL with the server's default settings and pts's own
 * defaults (the automatic pool size), as an operator scales out (issue 26, "Scale"). Starts them together on a
 * fresh database and an anvil, sends unsigned events from `--clients` clients spread over every process for
 * `--seconds`, samples the server's connections, waits until every acknowledged reward is confirmed, and
 * prints: start time, the server's max_connections and the peak connections used, answers by status
 * (a 5xx other than 503 `database_busy` is a failure), events per second and p95, and whether every
 * acknowledged reward was minted. Needs PostgreSQL at PTS_TEST_DATABASE_URL / DATABASE_URL (default local).
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startAnvil } from '../src/chain/anvil.ts';
import { automaticPoolSize } from '../src/db/database.ts';
import { type Core, call, replicaEnv, startCore, stopCore } from '../test/replicas/cluster.ts';

const { values } = parseArgs({
  options: {
    processes: { type: 'string', default: '10' },
    clients: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '30' },
  },
});
const PROCESSES = Number(values.processes);
const CLIENTS = Number(values.clients);
const SECONDS = Number(values.seconds);
const adminUrl =
  process.env.PTS_TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ADMIN_TOKEN = `admin-${randomBytes(16).toString('hex')}`;
const fmt = (n: number, digits = 1) => n.toFixed(digits);

async function main() {
  const name = `pts_bench_replicas_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const settings = await admin.query<{ max: number; reserved: number }>(
    "SELECT current_setting('max_connections')::int AS max, current_setting('superuser_reserved_connections')::int AS reserved",
  );
  const { max: maxConnections, reserved } = settings.rows[0]!;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const anvil = await startAnvil({ port: 0 });
  const cores: Core[] = [];
  let peakConnections = 0;
  const sample = async () => {
    const { rows } = await admin.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
      [name],
    );
    peakConnections = Math.max(peakConnections, rows[0]!.n);
  };
  const sampler = setInterval(() => void sample().catch(() => undefined), 250);
  try {
    console.log(
      `machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${fmt(totalmem() / 2 ** 30)} GiB; PostgreSQL max_connections ${maxConnections} (${reserved} reserved); pool per process (auto) ${automaticPoolSize(maxConnections, reserved, 10)}`,
    );
    const env = {
      ...replicaEnv({ databaseUrl: url.toString(), rpcUrl: anvil.rpcUrl, adminToken: ADMIN_TOKEN }),
      PTS_RATE_LIMIT_IP_PER_MINUTE: '10000000',
      LOG_LEVEL: 'error',
    };
    const startedAt = performance.now();
    await Promise.all(Array.from({ length: PROCESSES }, (_, i) => startCore(`r${i}`, env, cores)));
    console.log(`${PROCESSES} processes ready in ${fmt((performance.now() - startedAt) / 1000)} s (started together)`);

    const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const created = await call(
      cores[0]!,
      'POST',
      '/admin/brands',
      { name: 'Replicas', domain: 'replicas.example' },
      headers,
    );
    if (created.status !== 201) throw new Error(`brand not created: ${JSON.stringify(created.body)}`);
    const brandId = created.body.brand.brandId as string;

    const statuses = new Map<number, number>();
    const latencies: number[] = [];
    let acknowledged = 0;
    let sent = 0;
    const loadEnd = performance.now() + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let i = 0; performance.now() < loadEnd; i++) {
          const core = cores[(client + i) % cores.length]!;
          const at = performance.now();
          const answer = await call(core, 'POST', '/pts-api/manual-event', {
            brandId,
            eventType: 'account_creation',
            userEmail: `c${client}-${i}@replicas.example`,
            domain: 'replicas.example',
          });
          latencies.push(performance.now() - at);
          sent += 1;
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          if (answer.status === 200 && answer.body?.success) acknowledged += 1;
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    const p95 = latencies[Math.floor(latencies.length * 0.95)] ?? 0;
    console.log(
      `load: ${CLIENTS} clients × ${SECONDS} s over ${PROCESSES} processes: ${sent} events (${fmt(sent / SECONDS, 0)}/s), p95 ${fmt(p95)} ms; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );

    // Every acknowledged reward confirmed: the leader drives the queue; the others answer 503 not_minter_leader.
    const settleStart = performance.now();
    let queue: Record<string, number> = {};
    for (;;) {
      await Promise.all(
        cores.map((core) => call(core, 'POST', '/reward-processor/process-pending', undefined, headers)),
      );
      queue = (await call(cores[0]!, 'GET', '/reward-processor/queue')).body as Record<string, number>;
      if (queue.pending === 0 && queue.submitted === 0) break;
      if (performance.now() - settleStart > 300_000) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const rewards = new pg.Client({ connectionString: url.toString() });
    await rewards.connect();
    const { rows } = await rewards.query<{ status: string; n: number }>(
      'SELECT status, count(*)::int AS n FROM reward_mints GROUP BY status',
    );
    await rewards.end();
    const failures = [...statuses.entries()].filter(([status]) => status >= 500 && status !== 503);
    console.log(
      `settled in ${fmt((performance.now() - settleStart) / 1000)} s: queue ${JSON.stringify(queue)}; reward mints ${JSON.stringify(Object.fromEntries(rows.map((r) => [r.status, r.n])))}; acknowledged ${acknowledged}`,
    );
    console.log(
      `peak connections on the server for this database: ${peakConnections} of ${maxConnections - reserved} open to ordinary roles`,
    );
    const exited = cores.filter((core) => core.child.exitCode !== null);
    const ok = failures.length === 0 && exited.length === 0 && queue.pending === 0 && queue.submitted === 0;
    console.log(
      ok
        ? `replicas: ${PROCESSES} processes on one default PostgreSQL — no failure, every reward confirmed`
        : `replicas: FAILED (5xx ${JSON.stringify(failures)}, exited ${exited.map((core) => core.name).join(',') || 'none'})`,
    );
    if (!ok) process.exitCode = 1;
  } finally {
    clearInterval(sampler);
    await Promise.all(cores.map((core) => stopCore(core, 'SIGTERM')));
    for (const core of cores) rmSync(core.dataDir, { recursive: true, force: true });
    await anvil.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

await main();
