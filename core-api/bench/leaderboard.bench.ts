/**
 * Leaderboard benchmark (issue: "1,000,000 users and 10,000,000 activity rows, p95 under 50 ms per query on
 * PostgreSQL"). See docs/benchmarks.md.
 *
 *   node --import tsx core-api/bench/leaderboard.bench.ts [--users 1000000] [--rows 10000000] [--queries 600] [--json]
 *   (also: npm run bench -- leaderboard …)
 *
 * 1. Creates a throwaway PostgreSQL database (PTS_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
 *    and migrates it.
 * 2. Generates the activity log in SQL (generate_series): `rows` earned rewards over the last 90 days for
 *    `users` users (skewed: a few users are very active, most are not), across four platforms.
 * 3. Builds the leaderboard aggregates from that log with one GROUP BY — the same rows the incremental
 *    maintenance (recordActivities) writes — then checks a sample of users against the log.
 * 4. Measures, through the real service (readLeaderboard), a random mix of board reads: tokens earned and
 *    activity; daily, weekly, monthly and all-time; all platforms or one; top 10 or top 100; half of them
 *    with the caller's own rank. Also times incremental writes (recordActivities of 50 rewards) on the big
 *    table, and a primary-key lookup as the floor. Prints p50/p95/p99 and the ratios to the target and the floor.
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { type LeaderboardMetric, type LeaderboardPeriod, periodKey } from '@pts/shared';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { migrateToLatest, openDatabase } from '../src/db/database.ts';
import { type ActivityInput, recordActivities } from '../src/modules/leaderboards/activity.repository.ts';
import { readLeaderboard } from '../src/modules/leaderboards/leaderboards.service.ts';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const USERS = flag('users', 1_000_000);
const ROWS = flag('rows', 10_000_000);
const QUERIES = flag('queries', 600);
const JSON_OUT = args.includes('--json');
const TARGET_P95_MS = 50;
const logger = pino({ level: 'warn' });
const BRAND = '0x00000000000000000000000000000000000be4c1';
const PLATFORMS = ['web', 'discord', 'telegram', 'x'];

const log = (message: string) => {
  if (!JSON_OUT) process.stdout.write(`${message}\n`);
};
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function main(): Promise<void> {
  const adminUrl = process.env.PTS_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `pts_bench_lb_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  // Bulk generation only: roomier sort memory so GROUP BY and index builds stay in memory.
  await admin.query(`ALTER DATABASE ${dbName} SET work_mem = '256MB'`);
  await admin.query(`ALTER DATABASE ${dbName} SET maintenance_work_mem = '1GB'`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  const handle = await openDatabase({ databaseUrl: url.toString(), poolSize: 8 });
  const cleanup = async () => {
    await handle.close().catch(() => {});
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    await admin.end().catch(() => {});
  };
  process.once('SIGINT', () => {
    void cleanup().then(() => process.exit(130));
  });
  try {
    const { db } = handle;
    log(
      `leaderboard bench: ${USERS.toLocaleString()} users, ${ROWS.toLocaleString()} activity rows, database ${dbName}`,
    );
    log(
      `machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    await migrateToLatest(db);
    const now = new Date();

    // Bulk load without indexes, then build them once (the service's queries need every one of them).
    await sql`ALTER TABLE activity_log DROP CONSTRAINT activity_log_kind_ref_key`.execute(db);
    await sql`DROP INDEX activity_log_user_idx`.execute(db);
    await sql`ALTER TABLE leaderboard_scores DROP CONSTRAINT leaderboard_scores_pkey`.execute(db);
    await sql`DROP INDEX leaderboard_scores_rank_idx`.execute(db);
    let started = performance.now();
    const chunk = 1_000_000;
    for (let from = 1; from <= ROWS; from += chunk) {
      const to = Math.min(ROWS, from + chunk - 1);
      await sql`
        INSERT INTO activity_log (brand_id, user_key, platform, kind, amount, ref, detail, occurred_at)
        SELECT ${BRAND}, 'user' || floor(power(random(), 3) * ${USERS})::bigint || '@bench.example',
               (ARRAY['web','discord','telegram','x'])[1 + (i % 4)], 'earned', 1 + (i * 7919) % 100, 'bench-' || i, '{}',
               ${now}::timestamptz - random() * interval '90 days'
        FROM generate_series(${from}::bigint, ${to}::bigint) AS i`.execute(db);
      log(
        `  activity rows ${to.toLocaleString()} / ${ROWS.toLocaleString()} (${((performance.now() - started) / 1000).toFixed(0)} s)`,
      );
    }
    await sql`ALTER TABLE activity_log ADD CONSTRAINT activity_log_kind_ref_key UNIQUE (kind, ref)`.execute(db);
    await sql`CREATE INDEX activity_log_user_idx ON activity_log (brand_id, user_key, occurred_at DESC, id DESC)`.execute(
      db,
    );
    log(`activity log written and indexed in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    started = performance.now();
    const periods: [LeaderboardPeriod, string, string][] = [
      ['all_time', '1970-01-01', '1970-01-01'],
      ['monthly', periodKey('monthly', now), periodKey('monthly', now)],
      ['weekly', periodKey('weekly', now), periodKey('weekly', now)],
      ['daily', periodKey('daily', now), periodKey('daily', now)],
    ];
    for (const [period, start] of periods) {
      for (const [metric, value] of [
        ['pts_earned', sql`sum(amount)`],
        ['activity', sql`count(*)`],
      ] as const) {
        for (const platformMode of ['*', 'each'] as const) {
          const platform = platformMode === '*' ? sql`'*'` : sql`platform`;
          const groupBy = platformMode === '*' ? sql`user_key` : sql`user_key, platform`;
          await sql`
            INSERT INTO leaderboard_scores (brand_id, metric, period, period_start, platform, user_key, value, updated_at)
            SELECT ${BRAND}, ${metric}, ${period}, ${start}, ${platform}, user_key, ${value}, now()
            FROM activity_log
            WHERE brand_id = ${BRAND} AND occurred_at >= ${new Date(`${start}T00:00:00Z`)}
            GROUP BY ${groupBy}`.execute(db);
        }
      }
      log(`  aggregates for ${period} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    await sql`
      ALTER TABLE leaderboard_scores
      ADD PRIMARY KEY (brand_id, metric, period, period_start, platform, user_key)`.execute(db);
    await sql`
      CREATE INDEX leaderboard_scores_rank_idx
      ON leaderboard_scores (brand_id, metric, period, period_start, platform, value DESC, user_key)`.execute(db);
    await sql`
      INSERT INTO leaderboard_value_counts (brand_id, metric, period, period_start, platform, value, users)
      SELECT brand_id, metric, period, period_start, platform, value, count(*)
      FROM leaderboard_scores GROUP BY 1, 2, 3, 4, 5, 6`.execute(db);
    await sql`VACUUM ANALYZE leaderboard_scores`.execute(db);
    await sql`VACUUM ANALYZE leaderboard_value_counts`.execute(db);
    await sql`ANALYZE activity_log`.execute(db);
    const scoreRows = await sql<{ n: string }>`SELECT count(*) AS n FROM leaderboard_scores`.execute(db);
    const allTimeUsers = await sql<{ n: string }>`
      SELECT count(*) AS n FROM leaderboard_scores
      WHERE brand_id = ${BRAND} AND metric = 'pts_earned' AND period = 'all_time' AND platform = '*'`.execute(db);
    log(
      `aggregates built in ${((performance.now() - started) / 1000).toFixed(1)} s: ${Number(scoreRows.rows[0]?.n).toLocaleString()} rows, ${Number(allTimeUsers.rows[0]?.n).toLocaleString()} users on the all-time board`,
    );

    // Consistency: the aggregate equals the log for a sample of users.
    const sample = await sql<{ user_key: string; logged: string; score: string }>`
      SELECT s.user_key, s.value::text AS score,
             (SELECT sum(amount) FROM activity_log a WHERE a.brand_id = ${BRAND} AND a.user_key = s.user_key)::text AS logged
      FROM leaderboard_scores s
      WHERE s.brand_id = ${BRAND} AND s.metric = 'pts_earned' AND s.period = 'all_time' AND s.platform = '*'
      ORDER BY s.value DESC LIMIT 5`.execute(db);
    const consistent = sample.rows.every((row) => row.logged === row.score);
    log(`aggregate vs log for the top 5 users: ${consistent ? 'OK' : 'MISMATCH'}`);

    // Warm up, then measure.
    const metrics: LeaderboardMetric[] = ['pts_earned', 'activity'];
    const latencies: number[] = [];
    const worst: Record<string, number[]> = {};
    const randomUser = () => `user${Math.floor(Math.random() ** 3 * USERS)}@bench.example`;
    const one = async () => {
      const period = periods[Math.floor(Math.random() * periods.length)]?.[0] ?? 'all_time';
      const metric = metrics[Math.floor(Math.random() * metrics.length)] ?? 'pts_earned';
      const platform = Math.random() < 0.5 ? undefined : PLATFORMS[Math.floor(Math.random() * PLATFORMS.length)];
      const limit = Math.random() < 0.5 ? 10 : 100;
      const user = Math.random() < 0.5 ? randomUser() : undefined;
      const t0 = performance.now();
      await readLeaderboard(
        db,
        { brandId: BRAND, metric, period, limit, platform, user, revealIdentifiers: false, logger },
        now,
      );
      const ms = performance.now() - t0;
      const key = `${metric}/${period}/${platform ? 'platform' : 'all'}${user ? '+me' : ''}`;
      const bucket = worst[key] ?? [];
      bucket.push(ms);
      worst[key] = bucket;
      return ms;
    };
    for (let i = 0; i < 50; i++) await one();
    for (const key of Object.keys(worst)) delete worst[key];
    for (let i = 0; i < QUERIES; i++) latencies.push(await one());
    latencies.sort((a, b) => a - b);

    const floor: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      await db
        .selectFrom('leaderboard_scores')
        .select('value')
        .where('brand_id', '=', BRAND)
        .where('metric', '=', 'pts_earned')
        .where('period', '=', 'all_time')
        .where('period_start', '=', '1970-01-01')
        .where('platform', '=', '*')
        .where('user_key', '=', randomUser())
        .executeTakeFirst();
      floor.push(performance.now() - t0);
    }
    floor.sort((a, b) => a - b);

    const writes: number[] = [];
    for (let i = 0; i < 40; i++) {
      const batch: ActivityInput[] = Array.from({ length: 50 }, (_, j) => ({
        brandId: BRAND,
        accountKey: randomUser(),
        platform: PLATFORMS[j % 4] as string,
        kind: 'earned',
        amount: 10n,
        ref: `bench-write-${i}-${j}`,
        occurredAt: now,
      }));
      const t0 = performance.now();
      await db.transaction().execute((trx) => recordActivities(trx, batch, now));
      writes.push(performance.now() - t0);
    }
    writes.sort((a, b) => a - b);

    const p95 = percentile(latencies, 95);
    const summary = {
      users: USERS,
      rows: ROWS,
      queries: QUERIES,
      readMs: { p50: percentile(latencies, 50), p95, p99: percentile(latencies, 99), max: latencies.at(-1) ?? 0 },
      primaryKeyLookupMs: { p50: percentile(floor, 50), p95: percentile(floor, 95) },
      writeBatchOf50Ms: { p50: percentile(writes, 50), p95: percentile(writes, 95) },
      ratioP95ToTarget: p95 / TARGET_P95_MS,
      ratioP95ToPrimaryKeyLookup: p95 / Math.max(percentile(floor, 95), 0.001),
      slowestKinds: Object.entries(worst)
        .map(([kind, values]) => ({
          kind,
          p95: percentile(
            values.sort((a, b) => a - b),
            95,
          ),
          n: values.length,
        }))
        .sort((a, b) => b.p95 - a.p95)
        .slice(0, 5),
      consistent,
      target: p95 < TARGET_P95_MS ? 'met' : 'missed',
    };
    if (JSON_OUT) {
      process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    } else {
      const f = (n: number) => n.toFixed(2);
      log(
        `\nboard reads (${QUERIES}): p50 ${f(summary.readMs.p50)} ms, p95 ${f(p95)} ms, p99 ${f(summary.readMs.p99)} ms, max ${f(summary.readMs.max)} ms`,
      );
      log(
        `primary-key lookup (floor): p50 ${f(summary.primaryKeyLookupMs.p50)} ms, p95 ${f(summary.primaryKeyLookupMs.p95)} ms`,
      );
      log(
        `incremental write of 50 rewards: p50 ${f(summary.writeBatchOf50Ms.p50)} ms, p95 ${f(summary.writeBatchOf50Ms.p95)} ms`,
      );
      log('slowest kinds (p95 ms):');
      for (const kind of summary.slowestKinds) log(`  ${kind.kind.padEnd(32)} ${f(kind.p95)} (n=${kind.n})`);
      log(
        `ratio p95 ÷ target (${TARGET_P95_MS} ms): ${summary.ratioP95ToTarget.toFixed(3)}; p95 ÷ primary-key lookup: ${summary.ratioP95ToPrimaryKeyLookup.toFixed(1)}`,
      );
      log(
        `target (p95 < ${TARGET_P95_MS} ms at ${USERS.toLocaleString()} users / ${ROWS.toLocaleString()} rows): ${summary.target}`,
      );
    }
  } finally {
    await cleanup();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
