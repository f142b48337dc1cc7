import { ADDRESS_PATTERN } from '@pts/shared';
import { type CliCommand, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags } from '../flags.ts';
import { formatTable } from '../table.ts';

/** `pts relayer gas`: what the relayer's gas cost each brand (docs/relayer.md "Gas accounting"). */
export const relayerGasCommand: CliCommand = {
  usage: 'pts relayer gas [--brand ID] [--json]',
  summary: 'show gas used and its cost (wei and ETH) per brand for relayed transactions',
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, ...jsonOption });
    if (flags.brand !== undefined && !ADDRESS_PATTERN.test(flags.brand)) {
      throw new UsageError(`--brand must be a Brand ID (0x followed by 40 hex characters), got "${flags.brand}"`);
    }
    const report = await context.client().relayerGas(flags.brand);
    if (flags.json) return context.printJson(report);
    if (report.brands.length === 0) {
      context.print(`No relayed transactions${flags.brand ? ` for ${flags.brand.toLowerCase()}` : ''} yet.`);
      return;
    }
    const rows = report.brands.map((usage) => [
      usage.brandId ?? '(no brand)',
      String(usage.transactions),
      usage.gasUsed,
      usage.costWei,
      usage.costEth,
    ]);
    if (report.brands.length > 1) {
      rows.push([
        'TOTAL',
        String(report.total.transactions),
        report.total.gasUsed,
        report.total.costWei,
        report.total.costEth,
      ]);
    }
    context.print(formatTable(['BRAND', 'TRANSACTIONS', 'GAS USED', 'COST (WEI)', 'COST (ETH)'], rows));
  },
};
