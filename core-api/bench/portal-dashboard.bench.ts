/**
 * Portal dashboard benchmark (issue 22, "Speed": the dashboard's data for a brand with 100k members and 1M
 * events on PostgreSQL answers in p95 < 200 ms; the portal's initial JavaScript is under 250 KB gzipped).
 * See docs/benchmarks.md, "Portal dashboard".
 *
 *   npm run bench -- portal-dashboard [--members 100000] [--events 1000000] [--clients 8] [--duration 30]
 *                                     [--refresh-ms N]
 *                                     [--keep NAME] [--json]
 *
 * 1. Measures the portal's initial JavaScript: what the built index.html loads eagerly (its module entry and
 *    every `modulepreload`ed chunk), gzipped, against the 250 KB limit (building the portal first when its
 *    build is missing or stale, as `npm start` does).
 * 2. Creates a throwaway PostgreSQL database (`pts_bench_dash_<random>`; PTS_BENCH_DATABASE_URL names the
 *    server, default postgres://postgres@127.0.0.1:5432/postgres) and starts the platform on it exactly as
 *    `npm start` builds it (server, minter, embedded anvil). `--keep NAME` keeps the seeded database
 *    (`pts_bench_dash_keep_NAME`) and data directory and reuses them on the next run with that name, skipping
 *    the seed. Its names never collide with the agent-read bench's (`pts_bench_agent_*`).
 * 3. Creates one brand with five rules and three perk collections through the real services and admin API
 *    (the collections on chain), then bulk-loads in SQL what ~90 days of a busy program leave: `--members`
 *    members with wallets, `--events` events (five event types, busier lately, skewed towards a core of
 *    active members, 8 % refused with the batcher's reasons; written oldest first, as events arrive, through
 *    the `events` trigger that keeps the brand rollups), a confirmed reward mint per rewarded event, the
 *    activity log and leaderboard aggregates, perk redemptions (confirmed, pending, failed) with the
 *    relayer's gas for each, and token purchases fulfilled by a mint.
 * 4. Invites `--clients` team members through the operator's invite route; each accepts it in the portal
 *    (password, session cookie) like a browser. Then, from a worker thread, the clients call
 *    GET /portal/api/brands/:brandId/dashboard?days=N as the portal's DashboardPage does (it asks for the
 *    chosen period, 30 days by default, and again every 3 s; its day/week switch reads the same answer):
 *    for `--duration` seconds, each client sending its next request when the last one has answered (a closed
 *    loop: the machine's saturation), or with `--refresh-ms N` once every N ms as the page does (3000), the
 *    default period most of the time and 7, 90 and 365 days in between. GET /pts-api/health under the same
 *    clients for the same time just before is the floor of the run. Prints p50/p95/max and requests/s for
 *    the dashboard (all periods, then each) and the health endpoint, and the machine's load average.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import {
  fireInWorker,
  loadLine,
  machineLine,
  openBenchDatabase,
  type PreparedRequest,
  quantile,
  type TimedResult,
} from './bench-support.ts';

const TARGET_P95_MS = 200;
const TARGET_INITIAL_JS_BYTES = 250 * 1024;
const HEALTH_PATH = '/pts-api/health';
/** The periods the DashboardPage offers (days ending now) and how often the bench asks for each. */
const PERIODS = [
  { days: 30, weight: 7 }, // the page's default
  { days: 7, weight: 1 },
  { days: 90, weight: 1 },
  { days: 365, weight: 1 },
] as const;

const args = process.argv.slice(2);
/**
 * A number flag, or `fallback` when absent. `zero: true` for a flag whose 0 means something (`--refresh-ms 0`:
 * a closed loop, its default): the check used to refuse 0 for every flag, so the bench refused its own default.
 */
const flag = (name: string, fallback: number, options: { zero?: boolean } = {}): number => {
  const index = args.indexOf(`--${name}`);
  const value = index >= 0 ? Number(args[index + 1]) : fallback;
  const low = options.zero ? value < 0 : value <= 0;
  if (!Number.isFinite(value) || low) {
    throw new Error(`--${name} takes a ${options.zero ? 'number ≥ 0' : 'positive number'} (got ${args[index + 1]})`);
  }
  return value;
};
const text = (name: string): string | undefined => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : undefined;
};
const JSON_OUT = args.includes('--json');
const log = (message: string) => {
  if (!JSON_OUT) process.stdout.write(`${message}\n`);
};
const fmt = (value: number, digits = 1) => value.toFixed(digits);

interface Figures {
  label: string;
  requests: number;
  perSecond: number;
  p50: number;
  p95: number;
  max: number;
  errors: Record<string, number>;
}

function figures(label: string, results: TimedResult[], seconds: number): Figures {
  const sorted = results.map((result) => result.ms).sort((a, b) => a - b);
  const errors: Record<string, number> = {};
  for (const result of results) {
    if (result.status < 200 || result.status >= 300) errors[result.status] = (errors[result.status] ?? 0) + 1;
  }
  return {
    label,
    requests: results.length,
    perSecond: results.length / seconds,
    p50: quantile(sorted, 0.5),
    p95: quantile(sorted, 0.95),
    max: sorted[sorted.length - 1] ?? 0,
    errors,
  };
}

/** The scripts the built index.html loads before anything is clicked: its module entry and modulepreloads. */
async function initialJavaScript(): Promise<{ files: { file: string; bytes: number; gzip: number }[]; gzip: number }> {
  const { ensurePortalBuild, PORTAL_DIST_DIR } = await import('@pts/portal/build');
  await ensurePortalBuild({ log });
  const html = readFileSync(join(PORTAL_DIST_DIR, 'index.html'), 'utf8');
  const eager = new Set<string>();
  for (const tag of html.match(/<script\b[^>]*>/g) ?? []) {
    const src = /\bsrc="([^"]+)"/.exec(tag)?.[1];
    if (src && /\btype="module"/.test(tag)) eager.add(src);
  }
  for (const tag of html.match(/<link\b[^>]*>/g) ?? []) {
    const href = /\bhref="([^"]+)"/.exec(tag)?.[1];
    if (href && /\brel="modulepreload"/.test(tag)) eager.add(href);
  }
  if (eager.size === 0) throw new Error(`no module script in ${join(PORTAL_DIST_DIR, 'index.html')}`);
  const files = [...eager].map((url) => {
    // Served under /portal/: /portal/assets/x.js is dist/assets/x.js.
    const file = url.replace(/^\/portal\//, '').replace(/^\//, '');
    const body = readFileSync(join(PORTAL_DIST_DIR, file));
    return { file, bytes: body.length, gzip: gzipSync(body, { level: 9 }).length };
  });
  return { files, gzip: files.reduce((sum, f) => sum + f.gzip, 0) };
}

async function main(): Promise<void> {
  const MEMBERS = Math.floor(flag('members', 100_000));
  const EVENTS = Math.floor(flag('events', 1_000_000));
  const CLIENTS = Math.floor(flag('clients', 8));
  /** 0: each client asks again as soon as answered (saturation); else once per this many ms (the page's refresh). */
  const REFRESH_MS = Math.floor(flag('refresh-ms', 0, { zero: true }));
  const DURATION_S = flag('duration', 30);
  const keep = text('keep');

  const machine = machineLine();
  const loadBefore = loadLine();
  log(`portal dashboard bench — ${machine}, load ${loadBefore}`);

  const js = await initialJavaScript();
  log(`\nportal initial JavaScript (index.html's module entry + modulepreloads, gzip -9):`);
  for (const f of js.files)
    log(`  ${f.file.padEnd(44)} ${fmt(f.bytes / 1024).padStart(8)} KB  ${fmt(f.gzip / 1024).padStart(7)} KB gz`);
  log(
    `  total ${fmt(js.gzip / 1024)} KB gzipped — ${js.gzip < TARGET_INITIAL_JS_BYTES ? 'under' : 'OVER'} the ${TARGET_INITIAL_JS_BYTES / 1024} KB limit`,
  );

  const { sql } = await import('kysely');
  const { loadConfig } = await import('../src/config.ts');
  const { startPlatform } = await import('../src/startup/platform.ts');
  const { createBrand, setRule } = await import('../src/modules/brands/brands.service.ts');

  const database = await openBenchDatabase({ prefix: 'pts_bench_dash', dirPrefix: 'pts-bench-dash', keep });
  const { dbName, reused } = database;
  log(
    `\n${MEMBERS.toLocaleString()} members, ${EVENTS.toLocaleString()} events, one brand, ${CLIENTS} clients, ${DURATION_S} s`,
  );
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
      PTS_DATA_DIR: database.dataDir,
      PTS_CHAIN: 'local',
      PTS_SEED_DEMO: 'false',
      LOG_LEVEL: process.env.PTS_BENCH_LOG_LEVEL ?? 'silent',
      DATABASE_URL: database.url,
      // The load comes from one IP: lift the per-IP limits so the bench measures the reads, not 429s.
      PTS_RATE_LIMIT_IP_PER_MINUTE: '100000000',
      ...(process.env.PTS_DB_POOL_SIZE ? { PTS_DB_POOL_SIZE: process.env.PTS_DB_POOL_SIZE } : {}),
    });
    let started = performance.now();
    const platform = await startPlatform(config);
    stopPlatform = () => platform.stop();
    const { deps } = platform;
    const { db } = deps;
    log(`platform up in ${fmt((performance.now() - started) / 1000)} s at ${platform.url}`);
    const adminHeaders = { 'content-type': 'application/json', authorization: `Bearer ${deps.adminToken}` };

    let brandId: string;
    if (reused) {
      const row = await db.selectFrom('brands').select('address').orderBy('created_at').executeTakeFirstOrThrow();
      brandId = row.address;
      log(`reusing ${dbName}: brand ${brandId}`);
    } else {
      started = performance.now();
      const serviceDeps = { db, secrets: deps.secrets, clock: deps.clock, changes: platform.changes };
      const brand = await createBrand(serviceDeps, { name: 'Bench Shop', domain: 'shop.bench.example' });
      brandId = brand.brandId;
      for (const [eventType, rewardAmount] of [
        ['earn', 100],
        ['daily_checkin', 10],
        ['purchase', 50],
        ['share', 20],
        ['review', 30],
      ] as const) {
        await setRule(serviceDeps, brandId, { eventType, rewardAmount, cooldownHours: 0, maxClaims: -1 });
      }
      for (const [index, cost] of [50, 500, 5000].entries()) {
        const response = await fetch(`${platform.url}/admin/perks`, {
          method: 'POST',
          headers: adminHeaders,
          body: JSON.stringify({ brandId, name: `Perk ${index}`, cost, category: 'retail', maxPerUser: 100 }),
        });
        if (response.status !== 201) throw new Error(`perk: ${response.status} ${await response.text()}`);
      }
      log(`brand, 5 rules, 3 perk collections in ${fmt((performance.now() - started) / 1000)} s`);
      await seed(sql, db, {
        brandId,
        members: MEMBERS,
        events: EVENTS,
        now: deps.clock.now(),
        chainId: config.PTS_CHAIN_ID,
      });
    }

    // The team: one signed-in portal session per client, as many browsers with the dashboard open.
    const cookies: string[] = [];
    const runTag = Date.now().toString(36);
    for (let i = 0; i < CLIENTS; i++)
      cookies.push(await signIn(platform.url, adminHeaders, brandId, `team${i}.${runTag}@bench.example`));

    const dashboardPath = (days: number) => `/portal/api/brands/${brandId}/dashboard?days=${days}`;
    // A sanity check of what is measured: the 365-day answer holds every seeded event.
    const check = await fetch(`${platform.url}${dashboardPath(365)}`, { headers: { cookie: cookies[0] as string } });
    const answer = (await check.json()) as {
      members: { total: number };
      events: { accepted: number; refused: number; refusedByReason: unknown[] };
      redemptions: { count: number };
      tokenPurchases: { count: number };
      relayerGas: { transactions: number };
      leaderboard: { top: unknown[] };
    };
    if (check.status !== 200) throw new Error(`dashboard: ${check.status} ${JSON.stringify(answer)}`);
    log(
      `dashboard (365 days): ${answer.members.total.toLocaleString()} members, ${(answer.events.accepted + answer.events.refused).toLocaleString()} events (${answer.events.refused.toLocaleString()} refused, ${answer.events.refusedByReason.length} reasons), ${answer.redemptions.count} redemptions, ${answer.tokenPurchases.count} purchases, ${answer.relayerGas.transactions} relayed, top ${answer.leaderboard.top.length}`,
    );

    // The mix the page makes: its default period most of the time, the others in between, each client with
    // its own session, shuffled so every period meets the others under load.
    const dashboard: PreparedRequest[] = [];
    for (let round = 0; round < 50; round++) {
      for (const period of PERIODS) {
        for (let w = 0; w < period.weight; w++) {
          dashboard.push({
            label: `${period.days}d`,
            method: 'GET',
            path: dashboardPath(period.days),
            headers: { cookie: cookies[dashboard.length % CLIENTS] as string },
          });
        }
      }
    }
    for (let i = dashboard.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [dashboard[i], dashboard[j]] = [dashboard[j] as PreparedRequest, dashboard[i] as PreparedRequest];
    }
    const health: PreparedRequest[] = [{ label: 'health', method: 'GET', path: HEALTH_PATH, headers: {} }];
    // Unmeasured warm-up: connections open, plans and caches warm, the JIT settled.
    log(`warm-up: ${Math.min(DURATION_S, 5)} s of dashboards`);
    await fireInWorker({
      url: platform.url,
      concurrency: CLIENTS,
      phases: [dashboard],
      durationMs: Math.min(DURATION_S, 5) * 1000,
    });

    const loadAtStart = loadLine();
    log(
      `measuring: ${DURATION_S} s of health, then ${DURATION_S} s of dashboards, ${CLIENTS} clients, ${REFRESH_MS > 0 ? `each asking once every ${REFRESH_MS} ms` : 'each asking again as soon as answered'}`,
    );
    const spans: { start: number; end: number }[] = [];
    const results = await fireInWorker(
      {
        url: platform.url,
        concurrency: CLIENTS,
        phases: [health, dashboard],
        durationMs: DURATION_S * 1000,
        ...(REFRESH_MS > 0 ? { pacingMs: REFRESH_MS } : {}),
      },
      (index, at) => {
        if (at === 'start') spans[index] = { start: performance.now(), end: 0 };
        else (spans[index] as { end: number }).end = performance.now();
      },
    );
    const loadAtEnd = loadLine();
    const seconds = (index: number) => ((spans[index]?.end ?? 0) - (spans[index]?.start ?? 0)) / 1000;
    const healthFigures = figures(
      'health',
      results.filter((r) => r.label === 'health'),
      seconds(0),
    );
    const dashResults = results.filter((r) => r.label !== 'health');
    const all = figures('dashboard, all periods', dashResults, seconds(1));
    const perPeriod = PERIODS.map((period) =>
      figures(
        `dashboard, ${period.days} days`,
        dashResults.filter((r) => r.label === `${period.days}d`),
        seconds(1),
      ),
    );

    log(
      `\n${'endpoint'.padEnd(26)} ${'n'.padStart(6)} ${'req/s'.padStart(7)} ${'p50'.padStart(7)} ${'p95'.padStart(7)} ${'max'.padStart(7)}  errors`,
    );
    for (const row of [all, ...perPeriod, healthFigures]) {
      log(
        `${row.label.padEnd(26)} ${String(row.requests).padStart(6)} ${fmt(row.perSecond).padStart(7)} ${fmt(row.p50).padStart(7)} ${fmt(row.p95).padStart(7)} ${fmt(row.max).padStart(7)}  ${JSON.stringify(row.errors)}`,
      );
    }
    const errors = Object.values(all.errors).reduce((sum, n) => sum + n, 0);
    log(
      `\ndashboard p95 ${fmt(all.p95)} ms — ${all.p95 < TARGET_P95_MS ? 'under' : 'OVER'} the ${TARGET_P95_MS} ms target (${fmt(all.p95 / TARGET_P95_MS, 2)} ×); health p95 ${fmt(healthFigures.p95)} ms; load ${loadAtStart} at the start, ${loadAtEnd} at the end`,
    );
    if (errors > 0) log(`${errors} dashboard requests failed`);
    if (JSON_OUT) {
      process.stdout.write(
        `${JSON.stringify(
          {
            machine,
            load: { before: loadBefore, measureStart: loadAtStart, measureEnd: loadAtEnd },
            members: MEMBERS,
            events: EVENTS,
            clients: CLIENTS,
            refreshMs: REFRESH_MS,
            durationSeconds: DURATION_S,
            targetP95Ms: TARGET_P95_MS,
            dashboard: all,
            periods: perPeriod,
            health: healthFigures,
            initialJavaScript: { ...js, limit: TARGET_INITIAL_JS_BYTES },
          },
          null,
          2,
        )}\n`,
      );
    }
    if (errors > 0) process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

/** A team member invited by the operator who accepted in the portal: their session cookie. */
async function signIn(url: string, adminHeaders: Record<string, string>, brandId: string, email: string) {
  const invite = await fetch(`${url}/admin/portal/invites`, {
    method: 'POST',
    headers: adminHeaders,
    body: JSON.stringify({ brandId, email, role: 'viewer' }),
  });
  const invited = (await invite.json()) as { inviteUrl?: string };
  if (invite.status !== 201 || !invited.inviteUrl)
    throw new Error(`invite: ${invite.status} ${JSON.stringify(invited)}`);
  const token = new URL(invited.inviteUrl).hash.replace('#token=', '');
  const jar = new Map<string, string>();
  const call = async (method: string, path: string, body?: unknown, csrf?: string) => {
    const headers: Record<string, string> = {};
    if (jar.size > 0) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (csrf) headers['x-csrf-token'] = csrf;
    const response = await fetch(`${url}/portal/api${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [name, value = ''] = (cookie.split(';')[0] as string).split('=');
      jar.set(name as string, value);
    }
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const session = await call('GET', '/session');
  const accepted = await call(
    'POST',
    '/invites/accept',
    { token, password: 'bench dashboard password' },
    String(session.body.csrfToken),
  );
  if (accepted.status !== 200) throw new Error(`accept: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}

/**
 * About 90 days of one busy brand, in SQL (INSERT … SELECT over generate_series), shaped as the services
 * leave it: see the header.
 */
async function seed(
  sql: typeof import('kysely').sql,
  db: import('../src/db/database.ts').Database,
  input: { brandId: string; members: number; events: number; now: Date; chainId: number },
): Promise<void> {
  const { brandId, members, events, now, chainId } = input;
  const started = performance.now();
  const elapsed = () => `${fmt((performance.now() - started) / 1000, 0)} s`;
  await sql`
    INSERT INTO users (email, wallet_address, created_at)
    SELECT 'm' || i || '@bench.example', '0x' || substr(md5('w' || i) || md5('v' || i), 1, 40),
           ${now}::timestamptz - interval '120 days'
      FROM generate_series(1, ${members}::int) AS i`.execute(db);
  const chunk = 250_000;
  for (let from = 1; from <= events; from += chunk) {
    const to = Math.min(events, from + chunk - 1);
    // t: age (busier lately), k: event type, s: refused or not and why, m: member (a core of regulars).
    await sql`
      INSERT INTO events (id, brand_id, event_type, user_email, status, reason, source, domain, metadata,
                          reward_amount, created_at)
      SELECT gen_random_uuid(), ${brandId}, kind.event_type,
             'm' || (1 + floor(power(g.m, 2) * ${members})::bigint) || '@bench.example',
             CASE WHEN g.s < 0.08 THEN 'rejected' ELSE 'accepted' END,
             CASE WHEN g.s >= 0.08 THEN NULL
                  WHEN g.s < 0.05 THEN 'COOLDOWN_ACTIVE'
                  WHEN g.s < 0.07 THEN 'MAX_CLAIMS_REACHED'
                  WHEN g.s < 0.077 THEN 'DUPLICATE_EXTERNAL_ID'
                  ELSE 'UNKNOWN_EVENT_TYPE' END,
             'sdk', 'shop.bench.example',
             jsonb_build_object('platform', (ARRAY['web','discord','telegram','x'])[1 + (g.i % 4)]),
             CASE WHEN g.s < 0.08 THEN 0 ELSE kind.reward END,
             ${now}::timestamptz - interval '1 second' - power(g.t, 1.3) * interval '90 days'
        FROM (SELECT i, (1 - (i - 0.5) / ${events})::float8 AS t, random() AS k, random() AS s, random() AS m
                FROM generate_series(${from}::bigint, ${to}::bigint) AS i) AS g,
             LATERAL (SELECT CASE WHEN g.k < 0.40 THEN 'earn' WHEN g.k < 0.70 THEN 'daily_checkin'
                                  WHEN g.k < 0.85 THEN 'purchase' WHEN g.k < 0.95 THEN 'share' ELSE 'review' END
                               AS event_type,
                             CASE WHEN g.k < 0.40 THEN 100 WHEN g.k < 0.70 THEN 10 WHEN g.k < 0.85 THEN 50
                                  WHEN g.k < 0.95 THEN 20 ELSE 30 END AS reward) AS kind
       ORDER BY g.i`.execute(db);
    log(`  events ${to.toLocaleString()} / ${events.toLocaleString()} (${elapsed()})`);
  }
  // Every reward minted and confirmed (a settled ledger: nothing left for the minter to send).
  await sql`
    INSERT INTO reward_mints (id, event_id, brand_id, wallet_address, amount, status, attempts, created_at, updated_at)
    SELECT gen_random_uuid(), e.id, e.brand_id, u.wallet_address, e.reward_amount, 'confirmed', 1, e.created_at,
           e.created_at + interval '20 seconds'
      FROM events e JOIN users u ON u.email = e.user_email
     WHERE e.status = 'accepted' AND e.reward_amount > 0`.execute(db);
  log(`  reward mints (${elapsed()})`);
  await sql`
    INSERT INTO activity_log (brand_id, user_key, platform, kind, amount, ref, detail, occurred_at)
    SELECT brand_id, user_email, metadata->>'platform', 'earned', reward_amount, 'event:' || id, '{}', created_at
      FROM events WHERE status = 'accepted'`.execute(db);
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
  log(`  activity log and leaderboards (${elapsed()})`);
  // Perk redemptions: about one accepted event in 200 leads to one an hour later (cheap perks most often),
  // 90 % confirmed, 5 % pending, 5 % failed; each relayed, its gas on the brand.
  await sql`
    INSERT INTO perk_redemptions (id, brand_id, perk_id, user_key, platform, wallet_address, confirmation_code,
                                  status, cost, relay_tx_id, created_at, updated_at)
    SELECT gen_random_uuid(), e.brand_id, p.id, e.user_email, e.metadata->>'platform', u.wallet_address,
           'BENCH-' || row_number() OVER (),
           CASE WHEN x.r < 0.90 THEN 'confirmed' WHEN x.r < 0.95 THEN 'pending' ELSE 'failed' END,
           p.cost, gen_random_uuid()::text, least(e.created_at + interval '1 hour', ${now}::timestamptz - interval '1 second'),
           least(e.created_at + interval '1 hour', ${now}::timestamptz - interval '1 second')
      FROM events e
      JOIN users u ON u.email = e.user_email
      CROSS JOIN LATERAL (SELECT random() AS r, random() AS q) x
      JOIN LATERAL (SELECT id, cost FROM perks WHERE brand_id = e.brand_id ORDER BY cost
                     OFFSET CASE WHEN x.q < 0.7 THEN 0 WHEN x.q < 0.95 THEN 1 ELSE 2 END LIMIT 1) p ON true
     WHERE e.status = 'accepted' AND abs(hashtext(e.id::text)) % 200 = 0`.execute(db);
  await sql`
    INSERT INTO relay_transactions (id, chain_id, signer, nonce, status, current_hash, to_address, data, brand_id,
                                    user_address, purpose, gas_used, effective_gas_price, block_number, created_at,
                                    updated_at, submitted_at)
    SELECT r.relay_tx_id::uuid, ${chainId}, '0x00000000000000000000000000000000000be4c4', row_number() OVER (),
           CASE WHEN r.status = 'pending' THEN 'submitted' WHEN r.status = 'failed' THEN 'failed' ELSE 'confirmed' END,
           '0x' || md5(r.id::text) || md5(r.confirmation_code), '0x0000000000000000000000000000000000000001', '0x',
           lower(r.brand_id), r.wallet_address, 'perk-redeem',
           CASE WHEN r.status = 'pending' THEN NULL ELSE 90000 + abs(hashtext(r.id::text)) % 20000 END,
           CASE WHEN r.status = 'pending' THEN NULL ELSE 1000000000 + abs(hashtext(r.confirmation_code)) % 500000000 END,
           NULL, r.created_at, r.updated_at, r.created_at
      FROM perk_redemptions r`.execute(db);
  log(`  perk redemptions and their relayed transactions (${elapsed()})`);
  // Token purchases: a few a day, each fulfilled by a confirmed mint of 10 pts per cent.
  await sql`
    WITH bought AS (
      SELECT i, gen_random_uuid() AS mint_id, (500 + abs(hashtext('usd' || i)) % 20000)::bigint AS cents,
             ${now}::timestamptz - interval '1 second' - random() * interval '90 days' AS at
        FROM generate_series(1, 270) AS i),
    mints AS (
      INSERT INTO reward_mints (id, event_id, brand_id, wallet_address, amount, status, attempts, created_at, updated_at)
      SELECT mint_id, NULL, ${brandId}, '0x' || substr(md5('buyer' || i), 1, 40), cents * 10, 'confirmed', 1, at, at
        FROM bought RETURNING id)
    INSERT INTO payments (session_id, provider, brand_id, wallet_address, user_email, usd_cents, pts_amount, currency,
                          status, reward_mint_id, paid_at, fulfilled_at, created_at, updated_at)
    SELECT 'bench_' || i, 'local', ${brandId}, '0x' || substr(md5('buyer' || i), 1, 40), 'buyer' || i || '@bench.example',
           cents, cents * 10, 'usd', 'fulfilled', mint_id, at, at, at - interval '2 minutes', at
      FROM bought`.execute(db);
  for (const table of [
    'users',
    'events',
    'reward_mints',
    'activity_log',
    'leaderboard_scores',
    'perk_redemptions',
    'relay_transactions',
    'payments',
    'brand_event_days',
    'brand_members',
    'brand_member_types',
    'brand_member_days',
    'brand_member_weeks',
    'brand_active_counts',
    'brand_member_counts',
  ]) {
    await sql.raw(`VACUUM ANALYZE ${table}`).execute(db);
  }
  log(`seeded in ${elapsed()}`);
}

if (isMainThread) {
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : error);
      process.exit(1);
    },
  );
}
