import {
  type BrandGasUsageView,
  type RelayerGasResponse,
  relayerGasQuerySchema,
  relayerGasResponseSchema,
} from '@pts/shared';
import { formatEther } from 'viem';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { RelayRecords } from './relay.service.ts';

/** The API view of gas usage (decimal strings, and the cost in ETH); the brand analytics read model's too. */
export function gasUsageView(gasUsed: bigint, costWei: bigint, transactions: number) {
  return {
    transactions,
    gasUsed: gasUsed.toString(),
    costWei: costWei.toString(),
    costEth: formatEther(costWei),
  };
}

/**
 * `GET /admin/relayer/gas[?brand=ID]`: gas the relayer paid per brand, from `relay_transactions` (docs/relayer.md
 * "Gas accounting"). Reads the database only, so any admin instance answers.
 */
export function relayerGasAdminRoutes(deps: {
  relayRecords: Pick<RelayRecords, 'gasByBrand'>;
  adminToken: string;
}): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/relayer/gas',
      summary: 'Gas the relayer paid, per brand',
      description:
        'Sums gasUsed and gasUsed × effectiveGasPrice over relayed transactions with a receipt (reverted ones ' +
        'included: their gas was paid). `brandId` null collects transactions no brand was charged for.',
      tags: ['relayer'],
      security: ['adminToken'],
      before: [requireAdminToken(deps.adminToken)],
      request: { query: relayerGasQuerySchema },
      responses: {
        200: { description: 'Usage per brand and the total', schema: relayerGasResponseSchema },
        400: failure('Invalid brand id'),
        401: failure('Missing or wrong admin token'),
      },
      handle: async ({ query }): Promise<RelayerGasResponse> => {
        const usage = await deps.relayRecords.gasByBrand(query.brand);
        const brands: BrandGasUsageView[] = usage.map((row) => ({
          brandId: row.brandId,
          ...gasUsageView(row.gasUsed, row.costWei, row.transactions),
        }));
        const total = usage.reduce(
          (sum, row) => ({
            gasUsed: sum.gasUsed + row.gasUsed,
            costWei: sum.costWei + row.costWei,
            transactions: sum.transactions + row.transactions,
          }),
          { gasUsed: 0n, costWei: 0n, transactions: 0 },
        );
        return { success: true, brands, total: gasUsageView(total.gasUsed, total.costWei, total.transactions) };
      },
    }),
  ];
}
