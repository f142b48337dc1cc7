import type { Database } from '../../db/database.ts';
import type { BrandGasUsage } from '../relayer.types.ts';

/**
 * Gas the relayer spent per brand on `chainId` (transactions with a receipt, reverted ones included: their gas
 * was paid too), one brand's when `brandId` is given, of transactions relayed (created) in `window` when given.
 * Cost = Σ gasUsed × effectiveGasPrice, in wei.
 */
export async function readGasByBrand(
  db: Database,
  chainId: number,
  brandId?: string,
  window?: { from: Date; to: Date },
): Promise<BrandGasUsage[]> {
  let query = db
    .selectFrom('relay_transactions')
    .select((eb) => [
      'brand_id',
      eb.fn.countAll<string>().as('transactions'),
      eb.fn.coalesce(eb.fn.sum<string>('gas_used'), eb.val('0')).as('gas_used'),
      eb.fn.coalesce(eb.fn.sum<string>(eb('gas_used', '*', eb.ref('effective_gas_price'))), eb.val('0')).as('cost_wei'),
    ])
    .where('chain_id', '=', chainId)
    .where('gas_used', 'is not', null)
    .groupBy('brand_id')
    .orderBy('brand_id');
  if (brandId !== undefined) query = query.where('brand_id', '=', brandId.toLowerCase());
  if (window !== undefined) query = query.where('created_at', '>=', window.from).where('created_at', '<', window.to);
  const rows = await query.execute();
  return rows.map(
    (row): BrandGasUsage => ({
      brandId: row.brand_id,
      transactions: Number(row.transactions),
      gasUsed: BigInt(String(row.gas_used).split('.')[0]!),
      costWei: BigInt(String(row.cost_wei).split('.')[0]!),
    }),
  );
}
