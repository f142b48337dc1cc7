/**
 * The period's turn of VIP tiers at scale (issue 36 §1: "A scheduled job … handles the period's turn at 100k
 * members within the bench budget"). See docs/benchmarks.md, "Tier turn".
 *
 *   npm run bench -- tier-turn [--members 100000] [--events 3] [--db postgres|pglite|both] [--json]
 *
 * 1. A throwaway database (PostgreSQL at PTS_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres,
 *    dropped at the end; or an in-memory PGlite), migrated.
 * 2. One brand with a three-tier `rolling_365` table set through the tier service (Bronze 0, Silver 300, Gold
 *    1000, grace 0); `--members` members, each with `--events` accepted events of 100–400 pts spread over the
 *    last 500 days (so part of each member's total has left the window), 1% of the events reversed in full,
 *    and each member holding the tier of their all-time total (so the turn only lowers: no promotion runs,
 *    no entry reward is owed).
 * 3. Times the turn through the job's own entry (`runTierTurn`): the first run after the period turned (every
 *    member judged against the ledger, downgrades written a page at a time with their webhooks), then the same
 *    day again (the claim refuses it: nothing to do), then the next day's run (the window moved one day).
 *    Reports the time, the members judged, the rows written, and checks the held tiers against the ledger.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createManualClock, tierPeriodStart } from '@pts/shared';
import { sql } from 'kysely';
import pino from 'pino';
import { type DatabaseHandle, migrateToLatest, openDatabase } from '../src/db/database.ts';
import { runTierTurn, setTierTable } from '../src/modules/tiers/tiers.service.ts';
import { loadLine, machineLine, openBenchDatabase } from './bench-support.ts';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string): string => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? (args[index + 1] ?? fallback) : fallback;
};
const MEMBERS = Number(flag('members', '100000'));
const EVENTS = Number(flag('events', '3'));
const WHICH = flag('db', 'postgres');
const JSON_OUT = args.includes('--json');
const BRAND = '0x00000000000000000000000000000000007e1e75';
const logger = pino({ level: 'warn' });
const log = (message: string) => {
  if (!JSON_OUT) process.stdout.write(`${message}\n`);
};
const seconds = (ms: number) => (ms / 1000).toFixed(2);

interface RunResult {
  db: 'postgres' | 'pglite';
  members: number;
  events: number;
  seedSeconds: number;
  firstRun: { seconds: number; judged: number; downgraded: number; webhooks: number };
  sameDaySeconds: number;
  nextDay: { seconds: number; judged: number; downgraded: number };
  mismatches: number;
}

async function seed(handle: DatabaseHandle, now: Date) {
  const { db } = handle;
  await sql`
    INSERT INTO brands (address, name, website_domain, security_key_hash, security_key_encrypted, api_key_hash)
    VALUES (${BRAND}, 'Tier bench', 'tiers.bench.example', 'bench-sk', 'bench-sk', 'bench-api')`.execute(db);
  // An endpoint, so each downgrade's `member.tier_changed` is written to the outbox as in production.
  await sql`
    INSERT INTO webhook_endpoints (brand_id, url, secret_encrypted, active)
    VALUES (${BRAND}, 'https://hooks.bench.example/pts', 'bench', true)`.execute(db);
  const clock = createManualClock(now);
  await setTierTable(
    { db, clock },
    BRAND,
    {
      basis: 'earned',
      period: 'rolling_365',
      graceDays: 0,
      tiers: [
        { name: 'Bronze', threshold: 0, multiplier: 1, entryReward: 0 },
        { name: 'Silver', threshold: 300, multiplier: 1.5, entryReward: 50 },
        { name: 'Gold', threshold: 1000, multiplier: 2, entryReward: 200 },
      ],
    },
    'bench',
  );
  const total = MEMBERS * EVENTS;
  const chunk = 200_000;
  for (let from = 1; from <= total; from += chunk) {
    const to = Math.min(total, from + chunk - 1);
    await sql`
      INSERT INTO events (id, brand_id, event_type, user_email, status, source, domain, metadata, reward_amount, created_at)
      SELECT gen_random_uuid(), ${BRAND}, 'purchase', 'm' || (1 + (i % ${MEMBERS})) || '@bench.example', 'accepted',
             'sdk', 'tiers.bench.example', '{}', 100 + (i * 7919) % 301,
             ${now}::timestamptz - ((i * 104729) % (500 * 86400)) * interval '1 second'
        FROM generate_series(${from}::bigint, ${to}::bigint) AS i`.execute(db);
    log(`  events ${to.toLocaleString()} / ${total.toLocaleString()}`);
  }
  // 1% of the events reversed in full (the reversal's pts leave the member's tier basis).
  await sql`
    INSERT INTO reward_reversals (id, brand_id, reversal_id, event_id, user_email, pts, status, created_at, updated_at)
    SELECT gen_random_uuid(), e.brand_id, 'bench-' || e.id, e.id, e.user_email, e.reward_amount, 'confirmed', ${now}, ${now}
      FROM events e WHERE e.brand_id = ${BRAND} AND abs(hashtext(e.id::text)) % 100 = 0`.execute(db);
  // Each member holds the tier of their all-time total: the turn only lowers.
  await sql`
    INSERT INTO member_tiers (brand_id, member, tier_index, tier_name, changed_at)
    SELECT ${BRAND}, t.member, CASE WHEN t.total >= 1000 THEN 2 WHEN t.total >= 300 THEN 1 ELSE 0 END,
           CASE WHEN t.total >= 1000 THEN 'Gold' WHEN t.total >= 300 THEN 'Silver' ELSE 'Bronze' END, ${now}
      FROM (SELECT user_email AS member, sum(reward_amount) AS total FROM events
             WHERE brand_id = ${BRAND} GROUP BY user_email) t`.execute(db);
  await sql`ANALYZE`.execute(db);
}

/** Members whose held tier is not the tier of their ledger total over the window (after a turn: none). */
async function mismatches(handle: DatabaseHandle, from: Date): Promise<number> {
  const row = await sql<{ n: string }>`
    SELECT count(*)::text AS n FROM member_tiers m
      LEFT JOIN (SELECT e.user_email, sum(e.reward_amount) - coalesce(sum(r.pts), 0) AS total
                   FROM events e LEFT JOIN reward_reversals r ON r.event_id = e.id
                  WHERE e.brand_id = ${BRAND} AND e.created_at >= ${from} GROUP BY e.user_email) t
        ON t.user_email = m.member
     WHERE m.brand_id = ${BRAND}
       AND m.tier_index <> CASE WHEN coalesce(t.total, 0) >= 1000 THEN 2 WHEN coalesce(t.total, 0) >= 300 THEN 1 ELSE 0 END`.execute(
    handle.db,
  );
  return Number(row.rows[0]?.n ?? 0);
}

async function runOn(kind: 'postgres' | 'pglite'): Promise<RunResult> {
  const bench =
    kind === 'postgres'
      ? await openBenchDatabase({ prefix: 'pts_bench_tt', dirPrefix: 'pts-bench-tt', keep: undefined })
      : undefined;
  const handle = await openDatabase(bench ? { databaseUrl: bench.url, poolSize: 4 } : {});
  try {
    await migrateToLatest(handle.db);
    const now = new Date(Date.UTC(2027, 5, 1, 0, 5));
    let started = performance.now();
    log(`${kind}: seeding ${MEMBERS.toLocaleString()} members, ${(MEMBERS * EVENTS).toLocaleString()} events…`);
    await seed(handle, now);
    const seedSeconds = (performance.now() - started) / 1000;
    const clock = createManualClock(now);
    const deps = {
      db: handle.db,
      clock,
      logger,
      // The seed holds no one below their total, so the turn promotes nobody and owes no entry reward: an award
      // asked for here would be a bug in the bench's premise.
      events: {
        award: async () => {
          throw new Error('the tier-turn bench seeds no promotion');
        },
      },
    };
    const hooksBefore = await sql<{ n: string }>`SELECT count(*)::text AS n FROM webhook_deliveries`.execute(handle.db);
    started = performance.now();
    const first = await runTierTurn(deps);
    const firstMs = performance.now() - started;
    const hooksAfter = await sql<{ n: string }>`SELECT count(*)::text AS n FROM webhook_deliveries`.execute(handle.db);
    log(
      `  first run after the turn: ${seconds(firstMs)} s, ${first.members.toLocaleString()} judged, ${first.downgraded.toLocaleString()} downgraded`,
    );
    started = performance.now();
    const again = await runTierTurn(deps);
    const sameDayMs = performance.now() - started;
    if (again.brands !== 0) throw new Error('the same day’s second run was not refused by the claim');
    clock.advance(86_400_000);
    started = performance.now();
    const next = await runTierTurn(deps);
    const nextMs = performance.now() - started;
    log(`  next day: ${seconds(nextMs)} s, ${next.members.toLocaleString()} judged, ${next.downgraded} downgraded`);
    const wrong = await mismatches(handle, tierPeriodStart('rolling_365', clock.now()));
    return {
      db: kind,
      members: MEMBERS,
      events: MEMBERS * EVENTS,
      seedSeconds,
      firstRun: {
        seconds: firstMs / 1000,
        judged: first.members,
        downgraded: first.downgraded,
        webhooks: Number(hooksAfter.rows[0]?.n ?? 0) - Number(hooksBefore.rows[0]?.n ?? 0),
      },
      sameDaySeconds: sameDayMs / 1000,
      nextDay: { seconds: nextMs / 1000, judged: next.members, downgraded: next.downgraded },
      mismatches: wrong,
    };
  } finally {
    await handle.close().catch(() => {});
    await bench?.cleanup();
  }
}

async function main() {
  log(
    `tier-turn bench: ${MEMBERS.toLocaleString()} members × ${EVENTS} events (run ${randomBytes(2).toString('hex')})`,
  );
  log(`machine: ${machineLine()}, load ${loadLine()}`);
  const kinds: ('postgres' | 'pglite')[] = WHICH === 'both' ? ['postgres', 'pglite'] : [WHICH as 'postgres' | 'pglite'];
  const results: RunResult[] = [];
  for (const kind of kinds) results.push(await runOn(kind));
  if (JSON_OUT) {
    process.stdout.write(`${JSON.stringify({ machine: machineLine(), load: loadLine(), results }, null, 2)}\n`);
  } else {
    for (const r of results) {
      log(
        `${r.db}: first run ${seconds(r.firstRun.seconds * 1000)} s (${r.firstRun.judged.toLocaleString()} judged, ` +
          `${r.firstRun.downgraded.toLocaleString()} downgraded, ${r.firstRun.webhooks.toLocaleString()} webhooks); ` +
          `same day ${r.sameDaySeconds.toFixed(3)} s; next day ${r.nextDay.seconds.toFixed(2)} s ` +
          `(${r.nextDay.downgraded} downgraded); held tiers off the ledger: ${r.mismatches}`,
      );
    }
    log(`load after: ${loadLine()}`);
  }
  if (results.some((r) => r.mismatches > 0)) process.exit(1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
