import { type Selectable, sql } from 'kysely';
import type { Hex } from 'viem';
import type { Database } from '../db/database.ts';
import type { ChainTxsTable } from '../db/schema.ts';

// The minter's transactions (`chain_txs`): one row per signed transaction, whatever hashes replacements
// gave it. States: signed → submitted → confirmed | failed; `signed` and `submitted` are open. Grouped
// writes cost one statement whatever the group size.

export type ChainTxRow = Selectable<ChainTxsTable>;

export const OPEN_TX_STATUSES = ['signed', 'submitted'] as const;

/** Records a freshly signed transaction (`signed`); its id. */
export async function insertSignedTx(
  trx: Database,
  tx: {
    chainId: number;
    signer: string;
    nonce: bigint;
    purpose: string;
    hash: Hex;
    raw: Hex;
    maxFeePerGas: bigint;
    maxPriorityFeePerGas: bigint;
    gasLimit: bigint;
    at: Date;
  },
): Promise<bigint> {
  const inserted = await trx
    .insertInto('chain_txs')
    .values({
      chain_id: tx.chainId,
      signer: tx.signer,
      nonce: tx.nonce,
      purpose: tx.purpose,
      status: 'signed',
      hashes: JSON.stringify([tx.hash]),
      current_hash: tx.hash,
      raw_tx: tx.raw,
      max_fee_per_gas: tx.maxFeePerGas.toString(),
      max_priority_fee_per_gas: tx.maxPriorityFeePerGas.toString(),
      gas_limit: tx.gasLimit.toString(),
      submitted_at: tx.at,
      created_at: tx.at,
      updated_at: tx.at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return BigInt(inserted.id);
}

/** `signed` → `submitted` for sends the node took, unless a replacement changed the hash meanwhile. */
export async function markTxsSubmitted(
  db: Database,
  sends: { chainTxId: bigint; hash: Hex; lastError: string | null }[],
  at: Date,
): Promise<void> {
  if (sends.length === 0) return;
  const values = sql.join(
    sends.map((m) => sql`(${String(m.chainTxId)}::bigint, ${m.hash}::text, ${m.lastError}::text)`),
  );
  await sql`
    UPDATE chain_txs SET status = 'submitted', last_error = v.last_error, submitted_at = ${at}, updated_at = ${at}
    FROM (VALUES ${values}) AS v(id, hash, last_error)
    WHERE chain_txs.id = v.id AND chain_txs.status = 'signed' AND chain_txs.current_hash = v.hash`.execute(db);
}

/** Notes why a send failed; the transaction stays as it was (the tracker sends it again). */
export async function recordTxError(db: Database, chainTxId: bigint, error: string, at: Date): Promise<void> {
  await db.updateTable('chain_txs').set({ last_error: error, updated_at: at }).where('id', '=', chainTxId).execute();
}

/** Open transactions → `confirmed` with their receipt's hash, block and gas; the ids this call confirmed. */
export async function confirmTxs(
  trx: Database,
  mined: { chainTxId: bigint; hash: Hex; blockNumber: bigint; gasUsed: bigint }[],
  at: Date,
): Promise<bigint[]> {
  if (mined.length === 0) return [];
  const values = sql.join(
    mined.map(
      (m) =>
        sql`(${String(m.chainTxId)}::bigint, ${m.hash}::text, ${String(m.blockNumber)}::bigint, ${m.gasUsed.toString()}::text)`,
    ),
  );
  const { rows } = await sql<{ id: string | bigint }>`
    UPDATE chain_txs SET status = 'confirmed', current_hash = v.hash, block_number = v.block_number,
      gas_used = v.gas_used, last_error = NULL, updated_at = ${at}
    FROM (VALUES ${values}) AS v(id, hash, block_number, gas_used)
    WHERE chain_txs.id = v.id AND chain_txs.status IN ('signed', 'submitted')
    RETURNING chain_txs.id`.execute(trx);
  return rows.map((row) => BigInt(row.id));
}

/** An open transaction → `failed`; whether this call did it. */
export async function failTx(
  trx: Database,
  chainTxId: bigint,
  reason: string,
  blockNumber: bigint | null,
  at: Date,
): Promise<boolean> {
  const updated = await trx
    .updateTable('chain_txs')
    .set({ status: 'failed', last_error: reason, block_number: blockNumber, updated_at: at })
    .where('id', '=', chainTxId)
    .where('status', 'in', OPEN_TX_STATUSES)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/**
 * Records a replacement (same nonce, higher fees) as the transaction's current form, back to `signed`;
 * false when the row moved on meanwhile (mined, failed, or replaced by another pass).
 */
export async function recordReplacement(
  db: Database,
  tx: ChainTxRow,
  replacement: { hash: Hex; raw: Hex; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  at: Date,
): Promise<boolean> {
  const updated = await db
    .updateTable('chain_txs')
    .set({
      status: 'signed',
      hashes: JSON.stringify([...tx.hashes, replacement.hash]),
      current_hash: replacement.hash,
      raw_tx: replacement.raw,
      max_fee_per_gas: replacement.maxFeePerGas.toString(),
      max_priority_fee_per_gas: replacement.maxPriorityFeePerGas.toString(),
      submitted_at: at,
      updated_at: at,
    })
    .where('id', '=', tx.id)
    .where('current_hash', '=', tx.current_hash)
    .where('status', 'in', OPEN_TX_STATUSES)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/** The signer's open transactions, lowest nonce first. */
export function listOpenTxs(db: Database, chainId: number, signer: string): Promise<ChainTxRow[]> {
  return db
    .selectFrom('chain_txs')
    .selectAll()
    .where('chain_id', '=', chainId)
    .where('signer', '=', signer)
    .where('status', 'in', OPEN_TX_STATUSES)
    .orderBy('nonce')
    .execute();
}

/** How many transactions of the signer are open. */
export async function countOpenTxs(db: Database, chainId: number, signer: string): Promise<number> {
  const row = await db
    .selectFrom('chain_txs')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('chain_id', '=', chainId)
    .where('signer', '=', signer)
    .where('status', 'in', OPEN_TX_STATUSES)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
