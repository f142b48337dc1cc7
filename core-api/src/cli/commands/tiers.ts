import { readFileSync } from 'node:fs';
import type { SetTiersRequest, TiersResponse } from '@pts/shared';
import { type CliCommand, type CommandContext, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, requireFlag } from '../flags.ts';

function printTable(context: CommandContext, table: TiersResponse): void {
  if (!table.tiers) {
    context.print(`Brand ${table.brandId} has no tiers (set them with pts tiers set --brand ID --file tiers.json)`);
    return;
  }
  const unit = table.basis === 'spent' ? table.currency : 'pts';
  context.print(`Tiers of ${table.brandId}: by ${table.basis} over ${table.period}, grace ${table.graceDays} day(s)`);
  for (const tier of table.tiers) {
    const perks = tier.perks.length > 0 ? `, perks ${tier.perks.join(', ')}` : '';
    context.print(
      `  ${tier.name}: from ${tier.threshold} ${unit}, ×${tier.multiplier}, entry reward ${tier.entryReward}${perks}`,
    );
  }
}

/** `pts tiers set`: the brand's VIP tier table from a JSON file (docs/tiers.md), audited as the admin token. */
export const setTiersCommand: CliCommand = {
  usage: 'pts tiers set --brand ID --file tiers.json [--json]',
  summary:
    'replace the brand\'s VIP tier table with the file\'s {"basis", "period", "graceDays"?, "tiers": [{"name", "threshold", "multiplier", "entryReward", "perks"?}]}',
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, file: { type: 'string' }, ...jsonOption });
    const brandId = requireFlag(flags.brand, 'brand');
    const file = requireFlag(flags.file, 'file');
    let input: SetTiersRequest;
    try {
      input = JSON.parse(readFileSync(file, 'utf8')) as SetTiersRequest;
    } catch (error) {
      throw new UsageError(`--file ${file} is not readable JSON: ${(error as Error).message}`);
    }
    const table = await context.client().setTiers(brandId, input);
    if (flags.json) return context.printJson(table);
    printTable(context, table);
  },
};

/** `pts tiers show`: the brand's VIP tier table. */
export const showTiersCommand: CliCommand = {
  usage: 'pts tiers show --brand ID [--json]',
  summary: "show the brand's VIP tier table",
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, ...jsonOption });
    const table = await context.client().getTiers(requireFlag(flags.brand, 'brand'));
    if (flags.json) return context.printJson(table);
    printTable(context, table);
  },
};
