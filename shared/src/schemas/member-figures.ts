import { z } from 'zod';

/**
 * A member's balance and earnings as every surface shows them (docs/ledger.md, "One balance, one set of
 * labels"): `/services/balance` (and so the bots' /balance), the portal's member page, the agent's
 * `get_user_balance` and `get_user_stats` each answer this object, made by ONE function (core-api
 * modules/ledger/member-figures.ts) from one read of the wallet and the member ledger. Each figure says what
 * it counts: the wallet's are read on chain, the earnings from the ledger.
 */
export const memberFiguresSchema = z
  .object({
    /** Null when the member has no wallet yet (never rewarded, never pregenerated). */
    walletAddress: z.string().nullable(),
    counts: z
      .literal('wallet-on-chain+ledger')
      .describe(
        'What the figures count: `onChain`, `pending`, `reserved` and `spendable` are the wallet (one token across ' +
          'brands) read on chain at one block; `earned` is the member ledger at the brand asked (every identity of ' +
          'the account).',
      ),
    onChain: z.number().int().nonnegative().describe('pts in the wallet on chain at the block read'),
    pending: z
      .number()
      .int()
      .nonnegative()
      .describe(
        'Rewards accepted for the wallet (any brand) and not on chain at that block: queued, sent or mined after it',
      ),
    reserved: z.number().int().nonnegative().describe('pts held by the member’s perk redemptions still being mined'),
    spendable: z
      .number()
      .int()
      .nonnegative()
      .describe('onChain − reserved, never below 0: what a perk redemption is judged with'),
    earned: z
      .object({
        total: z.number().int().describe('Rewards accepted for the member at the brand, whatever their mint state'),
        confirmed: z
          .number()
          .int()
          .describe('The part of total recorded as minted: what the pts_earned leaderboards rank'),
        pending: z.number().int().describe('The part of total still being minted (queued or sent)'),
        unminted: z.number().int().describe('The part of total whose mint failed for good (an operator’s matter)'),
        reversed: z
          .number()
          .int()
          .describe('Pts reversals and manual deductions took back at the brand (already off total)'),
      })
      .describe('The member ledger at the brand asked: total = confirmed + pending + unminted'),
    debt: z
      .number()
      .int()
      .nonnegative()
      .describe(
        'Pts the member owes the brand asked (reversals the wallet could not cover), paid first from their next rewards there',
      ),
  })
  .meta({ id: 'MemberFigures' });
export type MemberFigures = z.infer<typeof memberFiguresSchema>;
