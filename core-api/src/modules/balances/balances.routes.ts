import { balanceParamsSchema, balanceResponseSchema, type Clock } from '@pts/shared';
import type { Address } from 'viem';
import { rewardTokenAbi } from '../../chain/artifacts/index.ts';
import type { ChainPublicClient } from '../../chain/deploy.ts';
import type { Database } from '../../db/database.ts';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { resolveAccountKey } from '../accounts/accounts.service.ts';

export interface BalancesRouterDeps {
  db: Database;
  clock: Clock;
  publicClient: ChainPublicClient;
  rewardToken: Address;
  verifyBrandSignature: BrandSignatureVerifier;
}

/** The wallet of a user: their own row, or their account's when the identity is linked and has none yet. */
async function walletOf(db: Database, userKey: string): Promise<string | null> {
  const own = await db.selectFrom('users').select('wallet_address').where('email', '=', userKey).executeTakeFirst();
  if (own?.wallet_address) return own.wallet_address;
  const account = await resolveAccountKey(db, userKey);
  if (account === userKey) return null;
  const row = await db.selectFrom('users').select('wallet_address').where('email', '=', account).executeTakeFirst();
  return row?.wallet_address ?? null;
}

/**
 * What a user can spend: the live on-chain balance of their wallet (their own, or their account's) and the
 * rewards accepted but not yet confirmed.
 */
export async function readBalance(
  deps: Pick<BalancesRouterDeps, 'db' | 'publicClient' | 'rewardToken'>,
  userIdentifier: string,
): Promise<{ walletAddress: string | null; balance: number; pending: number }> {
  const wallet = await walletOf(deps.db, userIdentifier);
  if (!wallet) return { walletAddress: null, balance: 0, pending: 0 };
  const [onChain, waiting] = await Promise.all([
    deps.publicClient.readContract({
      address: deps.rewardToken,
      abi: rewardTokenAbi,
      functionName: 'balanceOf',
      args: [wallet as Address],
    }),
    deps.db
      .selectFrom('reward_mints')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('amount'), eb.val('0')).as('total'))
      .where('wallet_address', '=', wallet)
      .where('status', 'in', ['pending', 'submitted'])
      .executeTakeFirstOrThrow(),
  ]);
  return { walletAddress: wallet, balance: Number(onChain), pending: Number(BigInt(waiting.total ?? '0')) };
}

/**
 * `GET /balance/:brandId/:userIdentifier` (brand-signed, under `/services`): what a chat user or site visitor
 * can spend — the live on-chain balance of their wallet, never a cached figure — plus rewards accepted and
 * not yet confirmed. One token serves every brand, so the balance is the wallet's, whichever brand asks.
 */
export function balanceRoutes(deps: BalancesRouterDeps): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/balance/:brandId/:userIdentifier',
      tags: ['engagement'],
      summary: "A user's spendable tokens (live on chain) and rewards not yet confirmed",
      security: ['brandSignature'],
      request: { params: balanceParamsSchema },
      responses: {
        200: { description: 'The balance', schema: balanceResponseSchema },
        400: failure('Malformed brand id or identifier'),
        401: failure('Unsigned or badly signed'),
      },
      handle: async ({ params: { brandId, userIdentifier }, req, res }) => {
        await requireBrandSignature(deps.verifyBrandSignature, req, brandId, "Reading a user's balance");
        const { walletAddress, balance, pending } = await readBalance(deps, userIdentifier);
        res.setHeader('Cache-Control', 'no-store');
        return { success: true, brandId, userIdentifier, walletAddress, balance, pending };
      },
    }),
  ];
}
