import { z } from 'zod';
import { brandIdSchema } from './common.ts';

/** `GET /admin/relayer/gas` query: one brand's usage, or every brand's. */
export const relayerGasQuerySchema = z.object({ brand: brandIdSchema.optional() });

/** Gas the relayer paid for one brand (`brandId` null: transactions no brand could be charged for). */
export const brandGasUsageSchema = z
  .object({
    brandId: z.string().nullable(),
    transactions: z.number().int().describe('Relayed transactions with a receipt (reverted ones included)'),
    gasUsed: z.string().describe('Decimal gas units'),
    costWei: z.string().describe('Σ gasUsed × effectiveGasPrice, decimal wei'),
    costEth: z.string().describe('costWei in ETH, decimal'),
  })
  .meta({ id: 'BrandGasUsage' });
export type BrandGasUsageView = z.infer<typeof brandGasUsageSchema>;

export const relayerGasResponseSchema = z
  .object({
    success: z.literal(true),
    brands: z.array(brandGasUsageSchema),
    total: brandGasUsageSchema.omit({ brandId: true }),
  })
  .meta({ id: 'RelayerGasResponse' });
export type RelayerGasResponse = z.infer<typeof relayerGasResponseSchema>;
