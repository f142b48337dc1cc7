import { z } from 'zod';
import { brandIdSchema, cleanString } from './common.ts';
import { memberFiguresSchema } from './member-figures.ts';

/** Path of `GET /services/balance/:brandId/:userIdentifier`. */
export const balanceParamsSchema = z.object({
  brandId: brandIdSchema,
  userIdentifier: cleanString(z.string().min(3).max(320)).transform((value) => value.toLowerCase()),
});

/**
 * A user's spendable tokens: the live on-chain balance of their wallet (the account's wallet when identities
 * are linked), plus rewards accepted but not yet confirmed on chain.
 */
export const balanceResponseSchema = z.object({
  success: z.literal(true),
  brandId: z.string(),
  userIdentifier: z.string(),
  /** Null when the user has no wallet yet (never rewarded, never pregenerated). */
  walletAddress: z.string().nullable(),
  /** Tokens in the wallet now (0 decimals). */
  balance: z.number().int().nonnegative(),
  /** Rewards accepted for this wallet and not yet confirmed on chain. */
  pending: z.number().int().nonnegative(),
  /** Every figure, labelled, as every member surface shows it (schemas/member-figures.ts). */
  figures: memberFiguresSchema,
});
export type BalanceResponse = z.infer<typeof balanceResponseSchema>;
