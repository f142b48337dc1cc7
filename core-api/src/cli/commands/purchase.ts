import type { BrandPurchases } from '@pts/shared';
import type { CliCommand } from '../cli-context.ts';
import { jsonOption, parseFlags, requireFlag } from '../flags.ts';
import { formatTable } from '../table.ts';

/** `pts purchase list`: a brand's token purchases and what has been minted for them. */
export const listPurchasesCommand: CliCommand = {
  usage: 'pts purchase list --brand ID [--json]',
  summary: "list a brand's token purchases with totals (USD paid, tokens bought, minted, confirmed)",
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, ...jsonOption });
    const brandId = requireFlag(flags.brand, 'brand');
    const result = await context.client().listPurchases(brandId);
    if (flags.json)
      return context.printJson({ brandId: result.brandId, purchases: result.purchases, totals: result.totals });
    printPurchases(context.print, result);
  },
};

function printPurchases(print: (line: string) => void, result: BrandPurchases): void {
  if (result.purchases.length === 0) {
    print(`No purchases yet for ${result.brandId}.`);
  } else {
    print(
      formatTable(
        ['SESSION', 'STATUS', 'USD', 'TOKENS', 'MINT', 'TX', 'CREATED'],
        result.purchases.map((purchase) => [
          purchase.sessionId,
          purchase.status,
          purchase.usdAmount,
          String(purchase.ptsAmount),
          purchase.mintStatus ?? '-',
          purchase.txHash ?? '-',
          purchase.createdAt,
        ]),
      ),
    );
    for (const purchase of result.purchases) {
      if (purchase.lastError) print(`! ${purchase.sessionId}: ${purchase.lastError}`);
    }
  }
  const { totals } = result;
  print('');
  print(`Purchases  ${totals.purchases} (${totals.fulfilled} fulfilled)`);
  print(`USD paid   ${totals.usdAmount}`);
  print(`Tokens     ${totals.ptsPurchased} bought · ${totals.ptsMinted} minted · ${totals.ptsConfirmed} confirmed`);
}
