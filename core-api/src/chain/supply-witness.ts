import type { Address, Hex, TransactionReceipt } from 'viem';
import type { Database } from '../db/database.ts';
import { rewardTokenAbi } from './artifacts/index.ts';
import { type ChainTxRow, listOpenTxs } from './chain-txs.repository.ts';
import type { ChainPublicClient } from './deploy.ts';
import { dbBigInt, minedAtOrBelow } from './receipts.ts';

// A mint batch whose nonce the chain has used while none of its recorded hashes has a receipt either never
// mined (another transaction took the nonce, and its rewards must be minted again) or mined without a record
// the chain can show: anvil restored from a state file written between a block's state and the block itself
// holds the batch's tokens and its nonce but not its transaction (seen: one transaction in three kill -9
// restarts under load). Minting that batch again would mint twice.
//
// The token's supply tells the two apart. No reward token is ever burned, so at one block the supply is the
// sum of every mint that landed. Take away what the ledger knows landed (confirmed at or below that block,
// and open batches with a receipt at or below it): what is left was minted by batches without a receipt.
// Dropped batches are credited with that surplus oldest nonce first, each only when the surplus left covers
// its whole amount; the rest are re-queued as before.

export interface SupplyWitnessDeps {
  db: Database;
  chainId: number;
  publicClient: ChainPublicClient;
  tokenAddress: Address;
  /** The minter's address (lower case), whose open batches may be mined already. */
  signer: string;
  /** A receipt by hash, null when the node has none. */
  receipt: (hash: Hex) => Promise<TransactionReceipt | null>;
}

export interface DroppedBatches {
  /** Batches whose tokens the supply holds: confirmed as of `blockNumber`, never minted again. */
  landed: ChainTxRow[];
  /** Batches the supply does not hold: their rewards go back to the queue. */
  lost: ChainTxRow[];
  /** The block the supply was read at. */
  blockNumber: bigint;
  /** Tokens on chain that no known mint accounts for, before crediting `landed`. */
  surplus: bigint;
}

/** Splits batches whose nonce was used with none of their hashes mined into landed and lost (see above). */
export async function splitDroppedBatches(deps: SupplyWitnessDeps, dropped: ChainTxRow[]): Promise<DroppedBatches> {
  const { db, chainId, publicClient } = deps;
  const head = await publicClient.getBlockNumber({ cacheTime: 0 });
  const supply = await publicClient.readContract({
    address: deps.tokenAddress,
    abi: rewardTokenAbi,
    functionName: 'totalSupply',
    blockNumber: head,
  });
  // Receipts read after the head: no open batch mined at or below it can be missed.
  const open = await listOpenTxs(db, chainId, deps.signer);
  const minedIds: bigint[] = [];
  for (const tx of open) {
    if (await minedAtOrBelow(deps.receipt, tx.hashes, head)) minedIds.push(BigInt(tx.id));
  }
  const known = await db
    .selectFrom('reward_mints')
    .innerJoin('chain_txs', 'chain_txs.id', 'reward_mints.chain_tx_id')
    .select((eb) => eb.fn.sum<string>('reward_mints.amount').as('amount'))
    .where('chain_txs.chain_id', '=', chainId)
    .where((eb) =>
      eb.or([
        eb.and([eb('reward_mints.status', '=', 'confirmed'), eb('chain_txs.block_number', '<=', head)]),
        ...(minedIds.length > 0
          ? [eb.and([eb('reward_mints.status', '=', 'submitted'), eb('chain_txs.id', 'in', minedIds)])]
          : []),
      ]),
    )
    .executeTakeFirst();
  const surplus = supply - dbBigInt(known?.amount);

  const amounts = new Map<string, bigint>();
  if (dropped.length > 0) {
    const rows = await db
      .selectFrom('reward_mints')
      .select(['chain_tx_id', (eb) => eb.fn.sum<string>('amount').as('amount')])
      .where(
        'chain_tx_id',
        'in',
        dropped.map((tx) => tx.id),
      )
      .where('status', '=', 'submitted')
      .groupBy('chain_tx_id')
      .execute();
    for (const row of rows) amounts.set(String(row.chain_tx_id), dbBigInt(row.amount));
  }

  let left = surplus;
  const landed: ChainTxRow[] = [];
  const lost: ChainTxRow[] = [];
  for (const tx of [...dropped].sort((a, b) => (BigInt(a.nonce) < BigInt(b.nonce) ? -1 : 1))) {
    const amount = amounts.get(String(tx.id)) ?? 0n;
    if (amount > 0n && left >= amount) {
      landed.push(tx);
      left -= amount;
    } else {
      lost.push(tx);
    }
  }
  return { landed, lost, blockNumber: head, surplus };
}
