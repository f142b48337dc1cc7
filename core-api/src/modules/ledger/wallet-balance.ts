import type { AccountKey, IdentityKey } from '@pts/shared';
import { sql } from 'kysely';
import type { Address, Hex } from 'viem';
import { rewardTokenAbi } from '../../chain/artifacts/index.ts';
import type { ChainPublicClient } from '../../chain/deploy.ts';
import { minedAtOrBelow } from '../../chain/receipts.ts';
import type { Database } from '../../db/database.ts';

/** What the wallet read needs: the database, the chain and the token. */
export interface WalletBalanceDeps {
  db: Database;
  publicClient: ChainPublicClient;
  rewardToken: Address;
  /** Reads the wallet's token balance (chain/chain-reads.ts); a live `balanceOf` when absent. */
  balanceOf?: ((wallet: Address) => Promise<bigint>) | undefined;
}

/** A member's wallet as the member ledger defines it (docs/ledger.md, "Wallet"). */
export interface WalletBalance {
  walletAddress: string | null;
  /** The token balance on chain, read at one block. */
  balance: number;
  /** Rewards accepted for the wallet and not on chain at that block (queued, sent, or mined after it). */
  pending: number;
  /** pts held by perk redemptions still pending: spendable = balance − reserved. */
  reserved: bigint;
  /**
   * No mint of the wallet is sent and unconfirmed: the figures hold until a write touches the wallet or a new
   * block comes (false: they were read against the node's receipts, and change as it mines).
   */
  settled: boolean;
}

/**
 * What the member may spend now: the wallet's balance on chain less the pts reserved by their redemptions
 * still pending, never below 0 — what redeem_perk judges with, so what every judgeRedemption caller reads
 * (bought pts included, failed mints not: the chain holds the one and not the other).
 */
export function spendableBalance(wallet: Pick<WalletBalance, 'balance' | 'reserved'>): bigint {
  const spendable = BigInt(wallet.balance) - wallet.reserved;
  return spendable > 0n ? spendable : 0n;
}

/**
 * What a user can spend: the live on-chain balance of their wallet (their own row's, or their account's when
 * the identity is linked and has none), the rewards accepted but not yet confirmed, and the pts held by perk
 * redemptions still pending (`reserved`) — the wallet and both sums in one statement, then the chain. It
 * takes an identity key from a request or an account key from resolution, never a bare string.
 */
export async function readWalletBalance(
  deps: WalletBalanceDeps,
  identityKey: IdentityKey | AccountKey,
): Promise<WalletBalance> {
  const result = await sql<{ wallet: string | null; pending: string; reserved: string; submitted: unknown }>`
    WITH w AS (
      SELECT coalesce(
        (SELECT wallet_address FROM users WHERE email = ${identityKey}),
        (SELECT u.wallet_address FROM account_links l JOIN users u ON u.email = l.account_key
          WHERE l.identity_key = ${identityKey} AND l.account_key <> ${identityKey})
      ) AS wallet)
    SELECT w.wallet,
           (SELECT coalesce(sum(amount), 0) FROM reward_mints
             WHERE wallet_address = w.wallet AND status IN ('pending', 'submitted'))::text AS pending,
           (SELECT coalesce(sum(cost), 0) FROM perk_redemptions
             WHERE wallet_address = lower(w.wallet) AND status = 'pending')::text AS reserved,
           (SELECT json_agg(json_build_object('hashes', t.hashes, 'amount', m.amount::text))
              FROM reward_mints m JOIN chain_txs t ON t.id = m.chain_tx_id
             WHERE m.wallet_address = w.wallet AND m.status = 'submitted') AS submitted
      FROM w`.execute(deps.db);
  const row = result.rows[0];
  const wallet = row?.wallet ?? null;
  if (!wallet) return { walletAddress: null, balance: 0, pending: 0, reserved: 0n, settled: true };
  let pending = BigInt(row?.pending ?? '0');
  const submitted = parseSubmitted(row?.submitted);
  let onChain: bigint;
  if (submitted.length === 0) {
    onChain = deps.balanceOf
      ? await deps.balanceOf(wallet as Address)
      : await readTokenBalance(deps, wallet as Address, undefined);
  } else {
    // Mints sent and not yet recorded as confirmed: one mined at or below the block the balance is read at
    // is in the balance already, so it is not pending too (the moment between a batch's block and the
    // tracker's receipt would otherwise count it twice).
    const block = await deps.publicClient.getBlockNumber({ cacheTime: 0 });
    onChain = await readTokenBalance(deps, wallet as Address, block);
    // A receipt that cannot be read counts as not mined: the answer before this check.
    const receipt = (hash: Hex) => deps.publicClient.getTransactionReceipt({ hash }).catch(() => null);
    const mined = await Promise.all(submitted.map((mint) => minedAtOrBelow(receipt, mint.hashes, block)));
    for (const [index, mint] of submitted.entries()) if (mined[index]) pending -= mint.amount;
  }
  return {
    walletAddress: wallet,
    balance: Number(onChain),
    pending: Number(pending),
    reserved: BigInt(row?.reserved ?? '0'),
    settled: submitted.length === 0,
  };
}

function readTokenBalance(
  deps: Pick<WalletBalanceDeps, 'publicClient' | 'rewardToken'>,
  wallet: Address,
  blockNumber: bigint | undefined,
): Promise<bigint> {
  return deps.publicClient.readContract({
    address: deps.rewardToken,
    abi: rewardTokenAbi,
    functionName: 'balanceOf',
    args: [wallet],
    ...(blockNumber === undefined ? {} : { blockNumber }),
  });
}

/** The wallet's `submitted` mints: the hashes their batch was signed with, and the amount. */
function parseSubmitted(value: unknown): { hashes: Hex[]; amount: bigint }[] {
  const list = (typeof value === 'string' ? JSON.parse(value) : value) as
    | { hashes: unknown; amount: string }[]
    | null
    | undefined;
  return (list ?? []).map((mint) => ({
    hashes: (typeof mint.hashes === 'string' ? JSON.parse(mint.hashes) : mint.hashes) as Hex[],
    amount: BigInt(mint.amount),
  }));
}
