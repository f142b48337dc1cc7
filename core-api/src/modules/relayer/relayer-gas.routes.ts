import {
  type BrandGasUsageView,
  errorEnvelopeSchema,
  type RelayerGasResponse,
  relayerGasQuerySchema,
  relayerGasResponseSchema,
} from '@pts/shared';
import { Router } from 'express';
import { formatEther } from 'viem';
import type { ChainInfo } from '../../chain/chain-info.ts';
import { readGasByBrand } from '../../chain/relayer-sender.ts';
import type { Database } from '../../db/database.ts';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { parseInput } from '../../http/validate.ts';
import type { ApiDocs } from '../../observability/openapi.ts';

function view(gasUsed: bigint, costWei: bigint, transactions: number) {
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
export function createRelayerGasAdminRouter(deps: { db: Database; chain: ChainInfo; adminToken: string }): Router {
  const router = Router();
  router.get('/relayer/gas', requireAdminToken(deps.adminToken), async (req, res) => {
    const query = parseInput(relayerGasQuerySchema, req.query, 'query');
    const usage = await readGasByBrand(deps.db, deps.chain.chainId, query.brand);
    const brands: BrandGasUsageView[] = usage.map((row) => ({
      brandId: row.brandId,
      ...view(row.gasUsed, row.costWei, row.transactions),
    }));
    const total = usage.reduce(
      (sum, row) => ({
        gasUsed: sum.gasUsed + row.gasUsed,
        costWei: sum.costWei + row.costWei,
        transactions: sum.transactions + row.transactions,
      }),
      { gasUsed: 0n, costWei: 0n, transactions: 0 },
    );
    const body: RelayerGasResponse = {
      success: true,
      brands,
      total: view(total.gasUsed, total.costWei, total.transactions),
    };
    res.json(body);
  });
  return router;
}

export function registerRelayerGasDocs(docs: ApiDocs, prefix = '/admin'): void {
  docs.register({
    method: 'get',
    path: `${prefix}/relayer/gas`,
    summary: 'Gas the relayer paid, per brand',
    description:
      'Sums gasUsed and gasUsed × effectiveGasPrice over relayed transactions with a receipt (reverted ones ' +
      'included: their gas was paid). `brandId` null collects transactions no brand was charged for.',
    tags: ['relayer'],
    request: { query: relayerGasQuerySchema },
    responses: {
      200: { description: 'Usage per brand and the total', schema: relayerGasResponseSchema },
      400: { description: 'Invalid brand id', schema: errorEnvelopeSchema },
      401: { description: 'Missing or wrong admin token', schema: errorEnvelopeSchema },
    },
    security: ['adminToken'],
  });
}
