/**
 * Agent API read benchmark (issue 14: "agent read endpoints p95 < 50 ms at 16 clients on PostgreSQL with 100k
 * users seeded"). See docs/benchmarks.md.
 *
 *   npm run bench -- agent-read [--users 100000] [--events 1000000] [--brands 10] [--concurrency 16]
 *                               [--requests 200] [--json] [--keep NAME] [--tools a,b]
 *
 * `--keep NAME` keeps the seeded database and data directory (`pts_bench_agent_keep_NAME`) after the run and
 * reuses them on the next run with the same name, skipping the seed (for profiling one change after another);
 * `--tools` measures only the named tools. Published figures come from a full run without either.
 * 1. Creates a throwaway PostgreSQL database (PTS_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
 *    and starts the platform on it exactly as `npm start` builds it (server, minter, embedded anvil).
 * 2. Creates the brands (rules `earn` 100, `daily_checkin` 10, `purchase` 50) and three perk collections each
 *    through the real services and admin API (the collections on chain), then bulk-loads in SQL what months of
 *    traffic would have left: `users` members with wallets, `events` accepted events over 90 days (skewed: a
 *    few members and brands are very active), their activity log and leaderboard aggregates, a perk
 *    redemption for one member in twenty and a streak for one in three.
 * 3. Creates an agent key for every brand and measures every read (GET) tool of the agent API over HTTP with
 *    signed requests where the tool wants them: each tool `--requests` times, on random members of random
 *    brands (the tool's own example, on a random fixture), `--concurrency` clients at once, from a worker
 *    thread so client work does not queue on the server's event loop: a cold pass and a warm pass of all tools
 *    shuffled together (throughput, machine CPU per request), then each tool alone, each time right after
 *    GET /pts-api/health alone under the same clients (the floor, pooled over the pass). Prints per tool
 *    p50/p95/p99 alone, the ratio of its p95 to the health endpoint's p95 of the same run (the target: ≤ 1.5
 *    for every read tool, issue 23), the server's CPU per request (event loop + PostgreSQL backends) and its
 *    ratio to health's, the ratio to the old absolute 50 ms target (which depends on the machine's speed of
 *    the day), and the tool's p95 in the mixed and cold passes.
 */
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import {
  fireInWorker,
  loadLine,
  machineLine,
  openBenchDatabase,
  type PreparedRequest,
  quantile,
  type TimedResult,
} from './bench-support.ts';

const TARGET_P95_MS = 50;
/** A read tool's p95 may be at most this many times the health endpoint's p95 of the same run. */
const TARGET_RATIO_TO_HEALTH = 1.5;
const HEALTH_PATH = '/pts-api/health';

// ---------------------------------------------------------------------------------------------------------
// Main thread: platform, seed, measure.
// ---------------------------------------------------------------------------------------------------------

const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const JSON_OUT = args.includes('--json');
const text = (name: string): string | undefined => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : undefined;
};
const log = (message: string) => {
  if (!JSON_OUT) process.stdout.write(`${message}\n`);
};
const fmt = (value: number, digits = 1) => value.toFixed(digits);

interface ToolFigures {
  tool: string;
  requests: number;
  errors: Record<string, number>;
  p50: number;
  p95: number;
  p99: number;
  ratioToTarget: number;
  /** Mean bytes of an answer's body. */
  bytes: number;
}

function figures(label: string, results: TimedResult[]): ToolFigures {
  const mine = results.filter((result) => result.label === label);
  const sorted = mine.map((result) => result.ms).sort((a, b) => a - b);
  const at = (q: number) => quantile(sorted, q);
  const errors: Record<string, number> = {};
  for (const result of mine) {
    if (result.status >= 200 && result.status < 300) continue;
    errors[result.status] = (errors[result.status] ?? 0) + 1;
  }
  return {
    tool: label,
    requests: mine.length,
    errors,
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    ratioToTarget: at(0.95) / TARGET_P95_MS,
    bytes: mine.length === 0 ? 0 : mine.reduce((sum, result) => sum + result.bytes, 0) / mine.length,
  };
}

/** Busy CPU ticks of the whole machine so far (Linux /proc/stat: user, nice, system, irq, softirq), or undefined. */
function machineCpu(): { busy: number; hz: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = fields;
    return { busy: user + nice + system + irq + softirq, hz: 100 };
  } catch {
    return undefined;
  }
}

/**
 * CPU the server has spent so far, in ms: this process's main thread (the server's event loop; scheduler
 * statistics, ns) and, per process id, the PostgreSQL backends serving `database` (clock ticks). The load
 * generator's thread and other processes are left out, so the figure is the server's own cost, whatever else
 * the VM does. `serverCpuSpent` subtracts two of them (backends that ended meanwhile drop out).
 */
function serverCpu(database: string): { node: number; backends: Map<string, number> } {
  let node = Number.NaN;
  try {
    const [ns = 0] = readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').trim().split(' ');
    node = Number(ns) / 1e6;
  } catch {}
  const backends = new Map<string, number>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(` ${database} `)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      backends.set(pid, (Number(fields[11]) + Number(fields[12])) * 10); // utime + stime, 100 ticks a second
    } catch {}
  }
  return { node, backends };
}

function serverCpuSpent(
  before: ReturnType<typeof serverCpu>,
  after: ReturnType<typeof serverCpu>,
): { node: number; postgres: number } {
  let postgres = 0;
  for (const [pid, ms] of after.backends) postgres += ms - (before.backends.get(pid) ?? 0);
  return { node: after.node - before.node, postgres };
}

async function main(): Promise<void> {
  const USERS = flag('users', 100_000);
  const EVENTS = flag('events', 1_000_000);
  const BRANDS = flag('brands', 10);
  const CONCURRENCY = flag('concurrency', 16);
  const REQUESTS = flag('requests', 200);

  const pg = (await import('pg')).default;
  const { sql } = await import('kysely');
  const { signAgentRequest } = await import('@pts/shared');
  const { loadConfig } = await import('../src/config.ts');
  const { startPlatform } = await import('../src/startup/platform.ts');
  const { createBrand, setRule } = await import('../src/modules/brands/brands.service.ts');
  const { agentTools } = await import('../src/agent/agent-tools.ts');
  const { createAgentKey } = await import('../src/agent/keys/agent-keys.service.ts');

  const machine = machineLine();
  log(`agent read bench — ${machine}, load ${loadLine()}`);
  log(`${USERS.toLocaleString()} members, ${EVENTS.toLocaleString()} events, ${BRANDS} brands, ${CONCURRENCY} clients`);

  const keep = text('keep');
  const onlyTools = text('tools')?.split(',');
  const database = await openBenchDatabase({ prefix: 'pts_bench_agent', dirPrefix: 'pts-bench-agent', keep });
  const { dbName, dataDir, reused } = database;
  let stopPlatform: (() => Promise<void>) | undefined;
  const cleanup = async () => {
    await stopPlatform?.().catch(() => {});
    await database.cleanup();
  };
  process.once('SIGINT', () => {
    void cleanup().then(() => process.exit(130));
  });

  try {
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      PTS_ANVIL_PORT: '0',
      PTS_DATA_DIR: dataDir,
      PTS_CHAIN: 'local',
      PTS_SEED_DEMO: 'false',
      LOG_LEVEL: process.env.PTS_BENCH_LOG_LEVEL ?? 'silent',
      DATABASE_URL: database.url,
      // The load comes from one IP: lift the per-IP limits so the bench measures the reads, not 429s.
      PTS_AGENT_IP_PER_MINUTE: '100000000',
      PTS_RATE_LIMIT_IP_PER_MINUTE: '100000000',
      // The operator's pool size, when set (docs/configuration.md); the default otherwise.
      ...(process.env.PTS_DB_POOL_SIZE ? { PTS_DB_POOL_SIZE: process.env.PTS_DB_POOL_SIZE } : {}),
    });
    let started = performance.now();
    const platform = await startPlatform(config);
    stopPlatform = () => platform.stop();
    const { deps } = platform;
    const { db } = deps;
    log(`platform up in ${fmt((performance.now() - started) / 1000)} s at ${platform.url}`);

    // Brands, rules and perk collections through the real services (perks land on chain).
    started = performance.now();
    const serviceDeps = { db, secrets: deps.secrets, clock: deps.clock, changes: platform.changes };
    const brands: { brandId: string; perks: string[]; ruleId: string }[] = [];
    const categories = ['retail', 'gaming', 'dining', 'travel'];
    for (let i = 0; !reused && i < BRANDS; i++) {
      const brand = await createBrand(serviceDeps, { name: `Bench Brand ${i}`, domain: `brand${i}.bench.example` });
      for (const [eventType, rewardAmount] of [
        ['earn', 100],
        ['daily_checkin', 10],
        ['purchase', 50],
      ] as const) {
        await setRule(serviceDeps, brand.brandId, { eventType, rewardAmount, cooldownHours: 0, maxClaims: -1 });
      }
      const perks: string[] = [];
      for (const [index, cost] of [50, 500, 5000].entries()) {
        const response = await fetch(`${platform.url}/admin/perks`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${deps.adminToken}` },
          body: JSON.stringify({
            brandId: brand.brandId,
            name: `Perk ${i}.${index}`,
            cost,
            category: categories[(i + index) % categories.length],
            maxPerUser: 100,
          }),
        });
        const body = (await response.json()) as { perk?: { uuid: string } };
        if (response.status !== 201 || !body.perk) throw new Error(`perk: ${response.status} ${JSON.stringify(body)}`);
        perks.push(body.perk.uuid);
      }
      const rule = await db
        .selectFrom('event_rules')
        .select('id')
        .where('brand_id', '=', brand.brandId)
        .where('event_type', '=', 'earn')
        .executeTakeFirstOrThrow();
      brands.push({ brandId: brand.brandId, perks, ruleId: String(rule.id) });
    }
    log(`${BRANDS} brands, ${BRANDS * 3} perk collections in ${fmt((performance.now() - started) / 1000)} s`);

    if (reused) {
      // The kept seed: its brands, their perk collections (cheapest first) and `earn` rule.
      const rows = await sql<{ brand_id: string; perks: string[]; rule_id: string }>`
        SELECT b.address AS brand_id, array(SELECT p.public_id FROM perks p WHERE p.brand_id = b.address ORDER BY p.cost) AS perks,
               (SELECT r.id::text FROM event_rules r WHERE r.brand_id = b.address AND r.event_type = 'earn') AS rule_id
        FROM brands b ORDER BY b.created_at`.execute(db);
      for (const row of rows.rows) brands.push({ brandId: row.brand_id, perks: row.perks, ruleId: row.rule_id });
      log(`reusing ${dbName}: ${brands.length} brands`);
    }
    const brandIds = brands.map((brand) => brand.brandId);
    const now = deps.clock.now();
    if (!reused) {
      // Months of traffic, in SQL.
      started = performance.now();
      await sql`
      INSERT INTO users (email, wallet_address, created_at)
      SELECT 'm' || i || '@bench.example', '0x' || substr(md5('w' || i) || md5('v' || i), 1, 40),
             ${now}::timestamptz - interval '120 days'
      FROM generate_series(1, ${USERS}::int) AS i`.execute(db);
      const chunk = 250_000;
      for (let from = 1; from <= EVENTS; from += chunk) {
        const to = Math.min(EVENTS, from + chunk - 1);
        await sql`
        INSERT INTO events (id, brand_id, event_type, user_email, status, source, domain, metadata, reward_amount, created_at)
        SELECT gen_random_uuid(), (${brandIds}::text[])[1 + floor(power(random(), 2) * ${BRANDS})::int],
               (ARRAY['earn','daily_checkin','purchase'])[1 + (i % 3)],
               'm' || (1 + floor(power(random(), 2) * ${USERS})::bigint) || '@bench.example',
               'accepted', null, null,
               jsonb_build_object('platform', (ARRAY['web','discord','telegram','x'])[1 + (i % 4)]),
               (ARRAY[100, 10, 50])[1 + (i % 3)],
               ${now}::timestamptz - random() * interval '90 days'
        FROM generate_series(${from}::bigint, ${to}::bigint) AS i`.execute(db);
        log(
          `  events ${to.toLocaleString()} / ${EVENTS.toLocaleString()} (${fmt((performance.now() - started) / 1000, 0)} s)`,
        );
      }
      await sql`
      INSERT INTO activity_log (brand_id, user_key, platform, kind, amount, ref, detail, occurred_at)
      SELECT brand_id, user_email, metadata->>'platform', 'earned', reward_amount, 'event:' || id, '{}', created_at
      FROM events`.execute(db);
      for (const [period, since] of [
        ['all_time', '1970-01-01'],
        ['monthly', `${now.toISOString().slice(0, 7)}-01`],
      ] as const) {
        for (const [metric, value] of [
          ['pts_earned', sql`sum(amount)`],
          ['activity', sql`count(*)`],
        ] as const) {
          await sql`
          INSERT INTO leaderboard_scores (brand_id, metric, period, period_start, platform, user_key, value, updated_at)
          SELECT brand_id, ${metric}, ${period}, ${since}, '*', user_key, ${value}, now()
          FROM activity_log WHERE occurred_at >= ${new Date(`${since}T00:00:00Z`)}
          GROUP BY brand_id, user_key`.execute(db);
        }
      }
      await sql`
      INSERT INTO leaderboard_value_counts (brand_id, metric, period, period_start, platform, value, users)
      SELECT brand_id, metric, period, period_start, platform, value, count(*)
      FROM leaderboard_scores GROUP BY 1, 2, 3, 4, 5, 6`.execute(db);
      // One member in twenty redeemed the cheapest perk of their first brand; one in three keeps a streak.
      await sql`
      INSERT INTO perk_redemptions (id, brand_id, perk_id, user_key, platform, wallet_address, confirmation_code,
                                    status, cost, created_at, updated_at)
      SELECT gen_random_uuid(), m.brand_id, p.id, m.user_email, 'web', u.wallet_address,
             'BENCH-' || row_number() OVER (), 'confirmed', p.cost, m.first_at + interval '1 day', m.first_at + interval '1 day'
      FROM (SELECT DISTINCT ON (user_email) user_email, brand_id, created_at AS first_at
            FROM events WHERE status = 'accepted' ORDER BY user_email, created_at) m
      JOIN users u ON u.email = m.user_email
      JOIN LATERAL (SELECT id, cost FROM perks WHERE brand_id = m.brand_id ORDER BY cost LIMIT 1) p ON true
      WHERE abs(hashtext(m.user_email)) % 20 = 0`.execute(db);
      await sql`
      INSERT INTO streaks (brand_id, user_key, streak_type, current, longest, last_activity_at, last_counted_day)
      SELECT brand_id, user_email, 'daily', 1 + abs(hashtext(user_email)) % 30, 1 + abs(hashtext(user_email)) % 60,
             max(created_at), to_char(max(created_at), 'YYYY-MM-DD')
      FROM events WHERE abs(hashtext(user_email)) % 3 = 0
      GROUP BY brand_id, user_email`.execute(db);
      for (const table of ['users', 'events', 'activity_log', 'leaderboard_scores', 'perk_redemptions', 'streaks']) {
        await sql.raw(`VACUUM ANALYZE ${table}`).execute(db);
      }
      log(`seeded in ${fmt((performance.now() - started) / 1000)} s`);
    }

    // Members per brand to ask about (the tools answer 404 for someone who never came to a brand).
    const members = await sql<{ brand_id: string; user_email: string }>`
      SELECT brand_id, user_email FROM events TABLESAMPLE SYSTEM (1) LIMIT 5000`.execute(db);
    if (members.rows.length === 0) throw new Error('no members sampled');
    const key = await createAgentKey(
      { db, clock: deps.clock, secrets: deps.secrets },
      { name: 'bench', brandIds, tier: 'enterprise', ratePerMinute: 100_000 },
    );

    const tools = agentTools(platform.services.agent.toolDeps)
      .map((tool) => tool.definition)
      .filter((tool) => tool.method === 'get' && (!onlyTools || onlyTools.includes(tool.name)));
    const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)] as T;
    const requests: PreparedRequest[] = [];
    for (const tool of tools) {
      for (let i = 0; i < REQUESTS; i++) {
        const member = pick(members.rows);
        const brand = brands.find((b) => b.brandId === member.brand_id) ?? (brands[0] as (typeof brands)[number]);
        const other = pick(brands.filter((b) => b !== brand));
        const example = tool.example({
          brandId: brand.brandId,
          otherBrandId: other.brandId,
          userId: member.user_email,
          perkId: pick(brand.perks),
          eventId: brand.ruleId,
        });
        const path = tool.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) =>
          encodeURIComponent(String(example.params?.[name])),
        );
        const search = new URLSearchParams();
        for (const [name, value] of Object.entries(example.query ?? {})) {
          if (value !== undefined) search.append(name, String(value));
        }
        const pathWithQuery = `/api/v1${path}${search.size > 0 ? `?${search}` : ''}`;
        requests.push({
          label: tool.name,
          method: 'GET',
          path: pathWithQuery,
          headers: {},
          signed: tool.access !== 'public',
        });
      }
    }
    // Shuffled: every tool meets every other under load, as agents would mix them.
    for (let i = requests.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [requests[i], requests[j]] = [requests[j] as PreparedRequest, requests[i] as PreparedRequest];
    }
    const healthRequests = (count: number, label = 'health'): PreparedRequest[] =>
      Array.from({ length: count }, () => ({ label, method: 'GET', path: HEALTH_PATH, headers: {} }));
    const sign = (batch: PreparedRequest[]): PreparedRequest[] => {
      const timestamp = Math.floor(Date.now() / 1000);
      return batch.map((request) =>
        request.signed
          ? {
              ...request,
              headers: signAgentRequest({ ...key, method: 'GET', pathWithQuery: request.path, body: '', timestamp }),
            }
          : request,
      );
    };
    // Signed at the time they are sent (a signature is good for ±300 s), a chunk at a time.
    const fireSigned = async (batch: PreparedRequest[]): Promise<TimedResult[]> => {
      const results: TimedResult[] = [];
      for (let from = 0; from < batch.length; from += 1000) {
        const phases = [sign(batch.slice(from, from + 1000))];
        results.push(...(await fireInWorker({ url: platform.url, concurrency: CONCURRENCY, phases })));
      }
      return results;
    };
    // Pass 1 (cold): every request once, the answer store empty — each public aggregate is computed on the
    // first call of each input. Pass 2 (warm, mixed): the same requests reshuffled, as a busy deployment
    // serves them (public aggregates from the store, member reads always on the call): the throughput of all
    // reads and the machine CPU per request.
    log(`cold pass: ${requests.length} agent requests (${tools.length} read tools × ${REQUESTS})`);
    const coldResults = await fireSigned(requests);
    for (let i = requests.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [requests[i], requests[j]] = [requests[j] as PreparedRequest, requests[i] as PreparedRequest];
    }
    log(`warm pass, mixed: the same ${requests.length} requests reshuffled`);
    started = performance.now();
    const cpuBefore = machineCpu();
    const results = await fireSigned(requests);
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = machineCpu();
    // CPU the whole machine spent per warm request (server, PostgreSQL, anvil, load generator): steadier
    // than throughput on a VM whose speed varies from run to run, for comparing one change with another.
    const cpuPerRequest =
      cpuBefore && cpuAfter ? ((cpuAfter.busy - cpuBefore.busy) * 1000) / cpuAfter.hz / requests.length : undefined;
    // Pass 3 (warm, per tool): each tool alone at `concurrency` clients, right after the health endpoint alone
    // under the same clients and connections. In the mixed pass every tool's latency is mostly the queue of
    // all the others, so a tool's own cost shows only here; the health phases before each tool, pooled, are
    // the floor the ratio divides by, measured across the whole pass so a slow moment of the VM weighs on
    // both sides alike. Each worker opens its connections on a warm-up burst that is not counted.
    log(`warm pass, per tool: each tool's ${REQUESTS} requests alone, each after ${REQUESTS} health`);
    const byTool = new Map<string, PreparedRequest[]>();
    for (const request of requests) byTool.set(request.label, [...(byTool.get(request.label) ?? []), request]);
    const alone: TimedResult[] = [];
    // The server's CPU (its event loop and its PostgreSQL backends) per request of each phase, by label.
    const cpuSpent = new Map<string, { node: number; postgres: number; requests: number }>();
    const toolNames = [...byTool.keys()];
    for (let from = 0; from < toolNames.length; from += 4) {
      const phases = [healthRequests(CONCURRENCY * 2, 'warm-up')];
      for (const name of toolNames.slice(from, from + 4)) {
        phases.push(healthRequests(REQUESTS), sign(byTool.get(name) as PreparedRequest[]));
      }
      let phaseStart = serverCpu(dbName);
      const onPhase = (index: number, at: 'start' | 'end') => {
        if (at === 'start') phaseStart = serverCpu(dbName);
        const label = phases[index]?.[0]?.label;
        if (at === 'end' && label) {
          const spent = serverCpuSpent(phaseStart, serverCpu(dbName));
          const sum = cpuSpent.get(label) ?? { node: 0, postgres: 0, requests: 0 };
          cpuSpent.set(label, {
            node: sum.node + spent.node,
            postgres: sum.postgres + spent.postgres,
            requests: sum.requests + (phases[index]?.length ?? 0),
          });
        }
      };
      alone.push(...(await fireInWorker({ url: platform.url, concurrency: CONCURRENCY, phases }, onPhase)));
    }
    const floor = figures('health', alone);
    const cpuOf = (label: string, part?: 'node' | 'postgres') => {
      const spent = cpuSpent.get(label);
      if (!spent) return Number.NaN;
      return (part ? spent[part] : spent.node + spent.postgres) / spent.requests;
    };

    // Round trips per request: each tool's first 20 requests again, one at a time, counting the database
    // queries (every pg client's query()) and chain calls (fetches to the RPC URL) they make.
    const counts = { queries: 0, rpc: 0 };
    const clientProto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
    const originalQuery = clientProto.query;
    const statements: string[] = [];
    clientProto.query = function (this: unknown, ...a: unknown[]) {
      counts.queries++;
      if (process.env.PTS_BENCH_SQL_LOG)
        statements.push(String((a[0] as { text?: string })?.text ?? a[0]).replace(/\s+/g, ' '));
      return originalQuery.apply(this, a);
    };
    const originalFetch = globalThis.fetch;
    globalThis.fetch = (input, init) => {
      if (!String(input instanceof Request ? input.url : input).startsWith(platform.url)) counts.rpc++;
      return originalFetch(input, init);
    };
    const perRequest = new Map<string, { queries: number; rpc: number }>();
    for (const tool of tools) {
      const mine = requests.filter((request) => request.label === tool.name).slice(0, 20);
      const before = { ...counts };
      for (const [index, request] of mine.entries()) {
        if (index === 1 && process.env.PTS_BENCH_SQL_LOG) {
          appendFileSync(process.env.PTS_BENCH_SQL_LOG, `\n## ${tool.name}\n${statements.join('\n')}\n`);
        }
        statements.length = 0;
        const timestamp = Math.floor(Date.now() / 1000);
        const headers = request.signed
          ? signAgentRequest({ ...key, method: 'GET', pathWithQuery: request.path, body: '', timestamp })
          : {};
        await (await originalFetch(`${platform.url}${request.path}`, { headers })).arrayBuffer();
      }
      perRequest.set(tool.name, {
        queries: (counts.queries - before.queries) / mine.length,
        rpc: (counts.rpc - before.rpc) / mine.length,
      });
    }
    clientProto.query = originalQuery;
    globalThis.fetch = originalFetch;

    const rows = tools.map((tool) => figures(tool.name, alone)).sort((a, b) => b.p95 - a.p95);
    const cold = new Map(tools.map((tool) => [tool.name, figures(tool.name, coldResults)]));
    const mixed = new Map(tools.map((tool) => [tool.name, figures(tool.name, results)]));
    log(
      `\n${'tool (warm, alone)'.padEnd(34)} ${'n'.padStart(5)} ${'p50'.padStart(7)} ${'p95'.padStart(7)} ${'p99'.padStart(7)}  p95/health  p95/50ms  ${'mixed p95'.padStart(9)}  ${'cold p95'.padStart(8)}  cpu ms (node+pg)  cpu/health  queries  rpc   bytes  errors`,
    );
    const ratioToHealth = (row: ToolFigures) => (floor.p95 > 0 ? row.p95 / floor.p95 : Number.POSITIVE_INFINITY);
    for (const row of [...rows, floor]) {
      const coldP95 = cold.get(row.tool)?.p95;
      const mixedP95 = mixed.get(row.tool)?.p95;
      log(
        `${row.tool.padEnd(34)} ${String(row.requests).padStart(5)} ${fmt(row.p50).padStart(7)} ${fmt(row.p95).padStart(7)} ${fmt(row.p99).padStart(7)}  ${fmt(ratioToHealth(row), 2).padStart(10)}  ${fmt(row.ratioToTarget, 2).padStart(8)}  ${(mixedP95 === undefined ? '' : fmt(mixedP95)).padStart(9)}  ${(coldP95 === undefined ? '' : fmt(coldP95)).padStart(8)}  ${`${fmt(cpuOf(row.tool), 2)} (${fmt(cpuOf(row.tool, 'node'), 2)}+${fmt(cpuOf(row.tool, 'postgres'), 2)})`.padStart(16)}  ${fmt(cpuOf(row.tool) / cpuOf('health'), 2).padStart(10)}  ${fmt(perRequest.get(row.tool)?.queries ?? 0).padStart(7)}  ${fmt(perRequest.get(row.tool)?.rpc ?? 0).padStart(3)}  ${fmt(row.bytes, 0).padStart(6)}  ${JSON.stringify(row.errors)}`,
      );
    }
    const all = figures(
      'all',
      results.map((result) => ({ ...result, label: 'all' })),
    );
    const missing = rows.filter((row) => ratioToHealth(row) > TARGET_RATIO_TO_HEALTH).map((row) => row.tool);
    log(
      `\nall agent reads (mixed): ${all.requests} in ${fmt(seconds)} s (${fmt(all.requests / seconds, 0)}/s), p95 ${fmt(all.p95)} ms = ${fmt(all.ratioToTarget, 2)} × target; health p95 ${fmt(floor.p95)} ms${cpuPerRequest === undefined ? '' : `; machine CPU ${fmt(cpuPerRequest, 2)} ms per request`}`,
    );
    log(
      missing.length === 0
        ? `every read tool p95 ≤ ${TARGET_RATIO_TO_HEALTH} × health p95`
        : `p95 > ${TARGET_RATIO_TO_HEALTH} × health p95: ${missing.map((tool) => `${tool} (${fmt(ratioToHealth(rows.find((row) => row.tool === tool) as ToolFigures), 2)})`).join(', ')}`,
    );
    if (JSON_OUT) {
      process.stdout.write(
        `${JSON.stringify({ machine, users: USERS, events: EVENTS, brands: BRANDS, concurrency: CONCURRENCY, all, health: floor, tools: rows.map((row) => ({ ...row, ratioToHealth: ratioToHealth(row), serverCpuMs: cpuOf(row.tool) })), healthServerCpuMs: cpuOf('health'), mixed: [...mixed.values()], cold: [...cold.values()] }, null, 2)}\n`,
      );
    }
  } finally {
    await cleanup();
  }
}

if (isMainThread) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : error);
      process.exit(1);
    },
  );
}
