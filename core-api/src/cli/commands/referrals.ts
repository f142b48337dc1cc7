import { readFileSync } from 'node:fs';
import type { ReferralProgramResponse, ReferralStatsResponse, SetReferralProgramRequest } from '@pts/shared';
import { type CliCommand, type CommandContext, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, requireFlag } from '../flags.ts';

function printProgram(context: CommandContext, answer: ReferralProgramResponse): void {
  const program = answer.program;
  if (!program) {
    context.print(
      `Brand ${answer.brandId} has no referral program (set it with pts referrals set --brand ID --file referrals.json)`,
    );
    return;
  }
  const minimum = program.minValue === null ? '' : ` of at least ${program.minValue} ${answer.currency}`;
  context.print(`Referrals of ${answer.brandId}: paid on the referee's first ${program.qualifyingEventType}${minimum}`);
  context.print(`  referrer ${program.referrerReward} pts, referee ${program.refereeReward} pts`);
  if (program.capPerReferrer !== null) {
    const period = program.capPeriodDays === null ? 'in all' : `per ${program.capPeriodDays} day(s)`;
    context.print(`  cap: ${program.capPerReferrer} paid referral(s) per referrer ${period}`);
  }
}

function printStats(context: CommandContext, stats: ReferralStatsResponse): void {
  context.print(
    `  codes used ${stats.invites}, waiting ${stats.attached}, qualified ${stats.qualified}, paid ${stats.paid}, reversed ${stats.reversed}`,
  );
  const refused = Object.entries(stats.refused);
  if (refused.length > 0)
    context.print(`  refused: ${refused.map(([reason, count]) => `${reason} ${count}`).join(', ')}`);
}

/** `pts referrals set`: the brand's referral program from a JSON file (docs/referrals.md), audited as the admin token. */
export const setReferralsCommand: CliCommand = {
  usage: 'pts referrals set --brand ID --file referrals.json [--json]',
  summary:
    'replace the brand\'s referral program with the file\'s {"qualifyingEventType", "minValue"?, "referrerReward", "refereeReward", "capPerReferrer"?, "capPeriodDays"?}',
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, file: { type: 'string' }, ...jsonOption });
    const brandId = requireFlag(flags.brand, 'brand');
    const file = requireFlag(flags.file, 'file');
    let input: SetReferralProgramRequest;
    try {
      input = JSON.parse(readFileSync(file, 'utf8')) as SetReferralProgramRequest;
    } catch (error) {
      throw new UsageError(`--file ${file} is not readable JSON: ${(error as Error).message}`);
    }
    const answer = await context.client().setReferrals(brandId, input);
    if (flags.json) return context.printJson(answer);
    printProgram(context, answer);
  },
};

/** `pts referrals show`: the brand's referral program and its figures. */
export const showReferralsCommand: CliCommand = {
  usage: 'pts referrals show --brand ID [--json]',
  summary: "show the brand's referral program and its figures (codes used, paid, refused by reason)",
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, ...jsonOption });
    const brandId = requireFlag(flags.brand, 'brand');
    const [program, stats] = await Promise.all([
      context.client().getReferrals(brandId),
      context.client().getReferralStats(brandId),
    ]);
    if (flags.json) return context.printJson({ ...program, stats });
    printProgram(context, program);
    if (program.program) printStats(context, stats);
  },
};
