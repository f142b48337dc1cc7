/**
 * What-if simulator benchmark (issue 36 §3: "in seconds even at 1,000,000 events"). See docs/benchmarks.md,
 * "Simulator".
 *
 *   npm run bench -- simulator [--members 100000] [--events 1000000] [--runs 5] [--keep NAME] [--json]
 *
 * 1. Creates a throwaway PostgreSQL database (`pts_bench_sim_<random>`; PTS_BENCH_DATABASE_URL names the
 *    server, default postgres://postgres@127.0.0.1:5432/postgres), migrated as `npm start` migrates it.
 *    `--keep NAME` keeps it (`pts_bench_sim_keep_NAME`) and reuses its seed on the next run with that name.
 * 2. Creates one brand through the real service with four rules (a fixed purchase, a rate order, a visit with
 *    a cooldown and max claims, a share with a global cap), then bulk-loads in SQL `--events` events of the
 *    last 90 days over `--members` members (8 % refused by the rules, a value on every order), through the
 *    `events` triggers.
 * 3. Runs `--runs` simulations of 30 days and of 90 days through SimulatorService.simulate (the service the
 *    admin route, the CLI and the agent tool call) with a proposal (purchase 150 pts, max 5 per member;
 *    orders 3 pts per $1), one after the other, and prints p50/p95/max per window, the events replayed and
 *    the process's peak RSS.
 */
import { performance } from 'node:perf_hooks';
import { loadLine, machineLine, openBenchDatabase, quantile } from './bench-support.ts';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const index = args.indexOf(`--${name}`);
  const value = index >= 0 ? Number(args[index + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`--${name} takes a positive number (got ${args[index + 1]})`);
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

async function main(): Promise<void> {
  const MEMBERS = Math.floor(flag('members', 100_000));
  const EVENTS = Math.floor(flag('events', 1_000_000));
  const RUNS = Math.floor(flag('runs', 5));
  const keep = text('keep');
  const { sql } = await import('kysely');
  const { systemClock, createManualClock } = await import('@pts/shared');
  const { openDatabase, migrateToLatest } = await import('../src/db/database.ts');
  const { createSecretBox } = await import('../src/security/secret-box.ts');
  const { createBrand, setRule } = await import('../src/modules/brands/brands.service.ts');
  const { createSimulatorService } = await import('../src/modules/simulator/simulator.service.ts');

  log(`simulator bench — ${machineLine()}, load ${loadLine()}`);
  const database = await openBenchDatabase({ prefix: 'pts_bench_sim', dirPrefix: 'pts-bench-sim', keep });
  const handle = await openDatabase({ databaseUrl: database.url, poolSize: 4 });
  const { db } = handle;
  try {
    await migrateToLatest(db);
    const now = new Date();
    let brandId: string;
    if (database.reused) {
      brandId = (await db.selectFrom('brands').select('address').executeTakeFirstOrThrow()).address;
      log(`reusing ${database.dbName}`);
    } else {
      const deps = { db, secrets: createSecretBox('11'.repeat(32)), clock: createManualClock(now) };
      const brand = await createBrand(deps, { name: 'Bench Simulator', domain: 'sim.bench.example' });
      brandId = brand.brandId;
      await setRule(deps, brandId, { eventType: 'purchase', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 });
      await setRule(deps, brandId, {
        eventType: 'order',
        rate: { pts: 2, per: '1.00', currency: 'USD' },
        cooldownHours: 0,
        maxClaims: -1,
      });
      await setRule(deps, brandId, { eventType: 'visit', rewardAmount: 10, cooldownHours: 1, maxClaims: 30 });
      await setRule(deps, brandId, {
        eventType: 'share',
        rewardAmount: 20,
        cooldownHours: 0,
        maxClaims: -1,
        maxTotal: 500_000,
      });
      const started = performance.now();
      const chunk = 250_000;
      for (let from = 1; from <= EVENTS; from += chunk) {
        const to = Math.min(EVENTS, from + chunk - 1);
        await sql`
          INSERT INTO events (id, brand_id, event_type, user_email, status, reason, source, domain, metadata,
                              reward_amount, value_minor, value_currency, created_at, sent_by)
          SELECT gen_random_uuid(), ${brandId}, kind.event_type,
                 'm' || (1 + floor(power(g.m, 2) * ${MEMBERS})::bigint) || '@bench.example',
                 CASE WHEN g.s < 0.08 THEN 'rejected' ELSE 'accepted' END,
                 CASE WHEN g.s >= 0.08 THEN NULL WHEN g.s < 0.05 THEN 'COOLDOWN_ACTIVE' ELSE 'MAX_CLAIMS_REACHED' END,
                 NULL, NULL, '{}',
                 CASE WHEN g.s < 0.08 THEN 0 WHEN kind.event_type = 'order' THEN kind.value * 2 / 100 ELSE kind.reward END,
                 CASE WHEN kind.event_type = 'order' THEN kind.value END,
                 CASE WHEN kind.event_type = 'order' THEN 'USD' END,
                 ${now}::timestamptz - interval '1 second' - g.t * interval '90 days', 'brand'
            FROM (SELECT i, (1 - (i - 0.5) / ${EVENTS})::float8 AS t, random() AS k, random() AS s, random() AS m
                    FROM generate_series(${from}::bigint, ${to}::bigint) AS i) AS g,
                 LATERAL (SELECT CASE WHEN g.k < 0.4 THEN 'visit' WHEN g.k < 0.7 THEN 'purchase'
                                      WHEN g.k < 0.9 THEN 'order' ELSE 'share' END AS event_type,
                                 CASE WHEN g.k < 0.4 THEN 10 WHEN g.k < 0.7 THEN 100 ELSE 20 END AS reward,
                                 (500 + floor(g.k * 10000))::bigint AS value) AS kind
           ORDER BY g.i`.execute(db);
        log(
          `  events ${to.toLocaleString()} / ${EVENTS.toLocaleString()} (${fmt((performance.now() - started) / 1000, 0)} s)`,
        );
      }
      await sql`ANALYZE events`.execute(db);
    }
    const simulator = createSimulatorService({ db, clock: systemClock, settings: { duplicateWindowSeconds: 60 } });
    const proposal = [
      { eventType: 'purchase', rewardAmount: 150, maxClaims: 5 },
      { eventType: 'order', rate: { pts: 3, per: '1.00', currency: 'USD' as const } },
    ];
    const results: Record<string, { p50: number; p95: number; max: number; events: number }> = {};
    let peakRss = process.memoryUsage().rss;
    for (const days of [30, 90]) {
      const times: number[] = [];
      let events = 0;
      for (let run = 0; run < RUNS; run++) {
        const started = performance.now();
        const answer = await simulator.simulate(brandId, { days, rules: proposal, campaigns: [] }, () => {
          peakRss = Math.max(peakRss, process.memoryUsage().rss);
        });
        times.push(performance.now() - started);
        events = answer.events.total;
        if (run === 0) {
          log(
            `  ${days} days: ${answer.events.total.toLocaleString()} events, actual ${answer.actual.ptsIssued} pts, simulated ${answer.simulated.ptsIssued} pts, ${answer.membersAffected.earnMore} more / ${answer.membersAffected.earnLess} less / ${answer.membersAffected.same} same`,
          );
        }
      }
      const sorted = times.sort((a, b) => a - b);
      results[`${days}d`] = {
        p50: quantile(sorted, 0.5),
        p95: quantile(sorted, 0.95),
        max: sorted[sorted.length - 1] ?? 0,
        events,
      };
      log(
        `simulate ${days} days (${events.toLocaleString()} events): p50 ${fmt(quantile(sorted, 0.5) / 1000, 2)} s, p95 ${fmt(quantile(sorted, 0.95) / 1000, 2)} s, max ${fmt((sorted[sorted.length - 1] ?? 0) / 1000, 2)} s over ${RUNS} runs`,
      );
    }
    log(`peak RSS ${fmt(peakRss / 1024 / 1024, 0)} MB; load after ${loadLine()}`);
    if (JSON_OUT) {
      process.stdout.write(
        `${JSON.stringify({ bench: 'simulator', members: MEMBERS, events: EVENTS, runs: RUNS, results, peakRssBytes: peakRss, machine: machineLine(), load: loadLine() })}\n`,
      );
    }
  } finally {
    await db.destroy();
    await database.cleanup();
  }
}

await main();
