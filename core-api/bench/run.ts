/**
 * `npm run bench [-- <which> [flags…]]`: runs one benchmark, or all of them in turn.
 *
 *   npm run bench                       # the event path (events.bench.ts), as before
 *   npm run bench -- events [flags]     # same, with its flags (--db both, --json, …)
 *   npm run bench -- relay [flags]      # relayed transactions per second and p99 at 16 users
 *   npm run bench -- leaderboard [flags]  # 1,000,000 users / 10,000,000 activity rows on PostgreSQL
 *   npm run bench -- agent-read [flags]  # agent API reads, 100k members on PostgreSQL, p95 at 16 clients
 *   npm run bench -- portal-dashboard [flags]  # the portal dashboard's data, 100k members / 1M events, p95 at 8 clients
 *   npm run bench -- portal-first-visit [--json]  # the JavaScript of a first portal visit over the wire (Chromium)
 *   npm run bench -- chain-soak [flags]  # the embedded chain's memory, CPU and disk under long load, then idle
 *   npm run bench -- replicas [flags]  # ten core-api processes on one default PostgreSQL under load
 *   npm run bench -- chain-realistic [flags]  # confirmed rewards/s and time to finality with 2 s blocks
 *   npm run bench -- simulator [flags]  # one what-if simulation at 1M events on PostgreSQL, p95 of 30 and 90 days
 *   npm run bench -- tier-turn [flags]  # the VIP tiers' period turn at 100,000 members (PostgreSQL; --db both)
 *   npm run bench -- all                # each of them with its defaults, one after the other (not chain-soak:
 *                                       # its default, 500,000 rewards and 10 idle minutes, takes too long;
 *                                       # not chain-realistic: 2 s blocks and 64 s to finality, 3–5 minutes)
 *
 * Each bench runs in its own process so one's memory and event loop never colour another's numbers.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const BENCHES: Record<string, string> = {
  events: 'events.bench.ts',
  relay: 'relay.bench.ts',
  leaderboard: 'leaderboard.bench.ts',
  'agent-read': 'agent-read.bench.ts',
  'portal-dashboard': 'portal-dashboard.bench.ts',
  'portal-first-visit': 'portal-first-visit.bench.ts',
  'chain-soak': 'chain-soak.bench.ts',
  replicas: 'replicas.bench.ts',
  'chain-realistic': 'chain-realistic.bench.ts',
  simulator: 'simulator.bench.ts',
  'tier-turn': 'tier-turn.bench.ts',
};
/** Run only when named: they take far longer than the others. */
const NOT_IN_ALL = new Set(['chain-soak', 'chain-realistic']);

const [first, ...rest] = process.argv.slice(2);
const named = first !== undefined && (first in BENCHES || first === 'all');
const which = named ? (first as string) : 'events';
const flags = named ? rest : process.argv.slice(2);
const selected = which === 'all' ? Object.keys(BENCHES).filter((name) => !NOT_IN_ALL.has(name)) : [which];

let failed = false;
for (const name of selected) {
  const file = join(here, BENCHES[name] as string);
  if (!existsSync(file)) {
    console.error(`bench ${name}: ${file} is missing`);
    failed = true;
    continue;
  }
  if (selected.length > 1) console.log(`\n=== ${name} ===`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', file, ...(which === 'all' ? [] : flags)], {
    stdio: 'inherit',
  });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
