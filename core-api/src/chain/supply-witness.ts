import { sql } from 'kysely';
import { type Address, BaseError, ContractFunctionRevertedError, type Hex, type TransactionReceipt } from 'viem';
import type { Database } from '../db/database.ts';
import { rewardTokenAbi } from './artifacts/index.ts';
import type { ChainTxRow } from './chain-txs.repository.ts';
import type { ChainPublicClient } from './deploy.ts';
import { readAppliedReversals, reversalTopic } from './mint/reverse.ts';
import { dbBigInt, minedAtOrBelow } from './receipts.ts';

// A mint batch whose nonce the chain has used while none of its recorded hashes has a receipt either never
// mined (another transaction took the nonce, and its rewards must be minted again) or mined without a record
// the chain can show: anvil restored from a state file written between a block's state and the block itself
// holds the batch's tokens and its nonce but not its transaction (seen: one transaction in three kill -9
// restarts under load). Minting that batch again would mint twice.
//
// The token's supply tells the two apart. Only the minter mints and only reversals burn, so at one block the
// supply is the sum of every mint that landed less every burn there. Take away what the ledger knows landed
// (confirmed at or below that block, and open batches with a receipt at or below it) and add back every burn
// there (confirmed reversals, and those in flight read from the token's record of applied reversals at that
// block): what is left was minted by batches without a receipt.
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

/**
 * What the ledger knows was minted in blocks at or below `block`: rewards confirmed there, plus the rewards
 * of open batches whose receipt is at or below it. The confirmed sum and the open batches are read in one
 * statement (one snapshot), so a batch the tracker confirms meanwhile is counted once, never twice or not at
 * all; the receipts are read afterwards, so no batch mined at or below `block` is missed. Compared with
 * `totalSupply()` at the same block this is like with like: mints the chain holds but the ledger has not
 * recorded yet cannot hide mints the chain lost (issue 26).
 */
export async function ledgerMintedAt(
  deps: Pick<SupplyWitnessDeps, 'db' | 'chainId' | 'signer' | 'receipt' | 'publicClient' | 'tokenAddress'>,
  block: bigint,
): Promise<{ amount: bigint; minedOpen: ChainTxRow['id'][] }> {
  const { rows } = await sql<{ confirmed: string | null; open: unknown; burning: unknown }>`
    SELECT
      ((SELECT coalesce(sum(m.amount), 0) FROM reward_mints m JOIN chain_txs t ON t.id = m.chain_tx_id
        WHERE t.chain_id = ${deps.chainId} AND t.signer = ${deps.signer} AND m.status = 'confirmed'
          AND t.block_number <= ${String(block)}::bigint)::numeric
      - (SELECT coalesce(sum(r.taken), 0) FROM reward_reversals r JOIN chain_txs t ON t.id = r.chain_tx_id
          WHERE t.chain_id = ${deps.chainId} AND t.signer = ${deps.signer} AND r.status = 'confirmed'
            AND t.block_number <= ${String(block)}::bigint))::text AS confirmed,
      (SELECT coalesce(json_agg(json_build_object('id', o.id::text, 'hashes', o.hashes, 'amount', o.amount)), '[]'::json)
        FROM (SELECT t.id, t.hashes, coalesce(sum(m.amount) FILTER (WHERE m.status = 'submitted'), 0)::text AS amount
              FROM chain_txs t LEFT JOIN reward_mints m ON m.chain_tx_id = t.id
              WHERE t.chain_id = ${deps.chainId} AND t.signer = ${deps.signer} AND t.status IN ('signed', 'submitted')
              GROUP BY t.id) o) AS open,
      (SELECT coalesce(json_agg(r.id::text), '[]'::json)
        FROM reward_reversals r LEFT JOIN chain_txs t ON t.id = r.chain_tx_id
        WHERE r.wallet_address IS NOT NULL
          AND ((r.status = 'submitted' AND t.chain_id = ${deps.chainId} AND t.signer = ${deps.signer})
            OR (r.status = 'pending' AND r.attempts > 0)
            OR (r.status = 'confirmed' AND t.chain_id = ${deps.chainId} AND t.signer = ${deps.signer}
                AND t.block_number > ${String(block)}::bigint))) AS burning`.execute(deps.db);
  const row = rows[0];
  const openRaw = typeof row?.open === 'string' ? JSON.parse(row.open) : (row?.open ?? []);
  const open = openRaw as { id: string; hashes: string[] | string; amount: string }[];
  let amount = dbBigInt(row?.confirmed);
  const minedOpen: bigint[] = [];
  const mined = await Promise.all(
    open.map((tx) =>
      minedAtOrBelow(deps.receipt, typeof tx.hashes === 'string' ? JSON.parse(tx.hashes) : tx.hashes, block),
    ),
  );
  open.forEach((tx, index) => {
    if (!mined[index]) return;
    amount += dbBigInt(tx.amount);
    minedOpen.push(BigInt(tx.id));
  });
  const burningRaw = typeof row?.burning === 'string' ? JSON.parse(row.burning) : (row?.burning ?? []);
  amount -= await burnedAt(deps, burningRaw as string[], block);
  return { amount, minedOpen };
}

/**
 * What the token burned at or below `block` for reversals whose burn the ledger has not settled there: in a
 * `reverseBatch` that is open (mined or not, with a receipt or without), put back after its transaction was
 * judged failed (it may have landed anyway), or confirmed in a later block (sent again after a first one
 * landed). The token's own record of each applied reversal, read at `block`, is exact whatever the receipts
 * show; without it such a burn lowered the supply unseen and a mint batch that landed could look lost.
 */
async function burnedAt(
  deps: Pick<SupplyWitnessDeps, 'publicClient' | 'tokenAddress'>,
  reversalIds: string[],
  block: bigint,
): Promise<bigint> {
  if (reversalIds.length === 0) return 0n;
  let records: Awaited<ReturnType<typeof readAppliedReversals>>;
  try {
    records = await readAppliedReversals(deps, reversalIds.map(reversalTopic), block);
  } catch (error) {
    // A token from before the record (docs/decisions.md, "A reversal burns once") reverts the read: it either
    // cannot burn at all or keeps no record to read, and the ledger's settled reversals are all it knows.
    // Any other failure (the RPC) aborts the judgement.
    if (error instanceof BaseError && error.walk((cause) => cause instanceof ContractFunctionRevertedError)) return 0n;
    throw error;
  }
  let burned = 0n;
  for (const record of records.values()) if (record.applied) burned += record.taken;
  return burned;
}

/**
 * Splits batches whose nonce was used with none of their hashes mined into landed and lost (see above), as
 * of `block` (the final block: a landed batch is confirmed there, never above it).
 */
export async function splitDroppedBatches(
  deps: SupplyWitnessDeps,
  dropped: ChainTxRow[],
  block: bigint,
): Promise<DroppedBatches> {
  const { db, publicClient } = deps;
  const head = block;
  const supply = await publicClient.readContract({
    address: deps.tokenAddress,
    abi: rewardTokenAbi,
    functionName: 'totalSupply',
    blockNumber: head,
  });
  const known = await ledgerMintedAt(deps, head);
  const surplus = supply - known.amount;

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
