import { readFileSync } from 'node:fs';
import type { SimulateRequest, Simulation } from '@pts/shared';
import { type CliCommand, type CommandContext, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, requireFlag } from '../flags.ts';

/** Reads a JSON file a flag names, or a usage error saying what is wrong with it. */
function readJsonFile(flag: string, file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--${flag} ${file} is not readable JSON: ${(error as Error).message}`);
  }
}

function printSimulation(context: CommandContext, answer: Simulation): void {
  context.print(`Simulation of ${answer.brandId} over ${answer.days} day(s) (${answer.from} to ${answer.to})`);
  context.print(
    `  events: ${answer.events.total} (${answer.events.replayed} replayed, ${answer.events.passedThrough} kept as recorded)`,
  );
  context.print(`  actual:    ${answer.actual.ptsIssued} pts (${answer.actual.cost} USD)`);
  context.print(`  simulated: ${answer.simulated.ptsIssued} pts (${answer.simulated.cost} USD)`);
  context.print(`  difference: ${answer.difference.pts} pts (${answer.difference.cost} USD)`);
  const { earnMore, earnLess, same } = answer.membersAffected;
  context.print(`  members: ${earnMore} earn more, ${earnLess} earn less, ${same} the same`);
  for (const change of answer.topChanges) {
    context.print(`    ${change.member}: ${change.actual} → ${change.simulated} (${change.difference})`);
  }
  if (answer.tiers) {
    const show = (counts: { name: string; members: number }[]) =>
      counts.map((t) => `${t.name} ${t.members}`).join(', ');
    context.print(`  tiers before: ${answer.tiers.before ? show(answer.tiers.before) : 'none'}`);
    context.print(`  tiers after:  ${show(answer.tiers.after)}`);
  }
}

/** `pts simulate`: the what-if simulator (docs/simulator.md) over the admin API; nothing is changed. */
export const simulateCommand: CliCommand = {
  usage: 'pts simulate --brand ID [--days 30] [--rules-file rules.json] [--tiers-file tiers.json] [--json]',
  summary:
    'replay the last 1–90 days of the brand\'s events under proposed rules ([{"eventType", "rewardAmount" | "rate", …}]) and tiers: pts and cost against actual',
  async run(args, context) {
    const flags = parseFlags(args, {
      brand: { type: 'string' },
      days: { type: 'string' },
      'rules-file': { type: 'string' },
      'tiers-file': { type: 'string' },
      ...jsonOption,
    });
    const brandId = requireFlag(flags.brand, 'brand');
    const days = flags.days === undefined ? 30 : Number(flags.days);
    if (!Number.isInteger(days) || days < 1 || days > 90) {
      throw new UsageError(`--days must be a whole number of days from 1 to 90, got ${flags.days}`);
    }
    const rulesFile = flags['rules-file'];
    const rules = rulesFile === undefined ? [] : readJsonFile('rules-file', rulesFile);
    if (!Array.isArray(rules)) throw new UsageError(`--rules-file ${rulesFile} must hold a JSON array of rules`);
    const tiersFile = flags['tiers-file'];
    const request: SimulateRequest = {
      days,
      rules: rules as SimulateRequest['rules'],
      ...(tiersFile === undefined ? {} : { tiers: readJsonFile('tiers-file', tiersFile) as SimulateRequest['tiers'] }),
    };
    // Progress goes to stderr, so that with --json stdout holds the one JSON answer.
    context.progress(`Replaying ${days} day(s) of ${brandId}'s events under ${rules.length} proposed rule(s)…`);
    const answer = await context.client().simulate(brandId, request);
    context.progress(`Replayed ${answer.events.total} event(s) in ${answer.durationMs} ms`);
    if (flags.json) return context.printJson(answer);
    printSimulation(context, answer);
  },
};
