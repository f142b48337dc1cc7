import { type Selectable, sql } from 'kysely';
import { type Hex, keccak256 } from 'viem';
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
  mined: { chainTxId: bigint; hash: Hex; blockNumber: bigint; gasUsed: bigint; by?: 'receipt' | 'supply' }[],
  at: Date,
): Promise<bigint[]> {
  if (mined.length === 0) return [];
  const values = sql.join(
    mined.map(
      (m) =>
        sql`(${String(m.chainTxId)}::bigint, ${m.hash}::text, ${String(m.blockNumber)}::bigint, ${m.gasUsed.toString()}::text, ${m.by ?? 'receipt'}::text)`,
    ),
  );
  const { rows } = await sql<{ id: string | bigint }>`
    UPDATE chain_txs SET status = 'confirmed', current_hash = v.hash, block_number = v.block_number,
      gas_used = v.gas_used, confirmed_by = v.confirmed_by, last_error = NULL, updated_at = ${at}
    FROM (VALUES ${values}) AS v(id, hash, block_number, gas_used, confirmed_by)
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

/**
 * Receipts found for open transactions whose block is not final yet: the block is recorded (and a `signed`
 * row becomes `submitted`, since it is mined) but the transaction stays open until its block is final.
 */
export async function recordMinedTxs(
  db: Database,
  mined: { chainTxId: bigint; blockNumber: bigint }[],
  at: Date,
): Promise<void> {
  if (mined.length === 0) return;
  const values = sql.join(mined.map((m) => sql`(${String(m.chainTxId)}::bigint, ${String(m.blockNumber)}::bigint)`));
  await sql`
    UPDATE chain_txs SET status = 'submitted', block_number = v.block_number, last_error = NULL, updated_at = ${at}
    FROM (VALUES ${values}) AS v(id, block_number)
    WHERE chain_txs.id = v.id AND chain_txs.status IN ('signed', 'submitted')
      AND chain_txs.block_number IS DISTINCT FROM v.block_number`.execute(db);
}

/**
 * Open transactions whose recorded receipt the chain no longer has (a rollback): back to `signed` with no
 * block, so the tracker sends their signed bytes again at once.
 */
export async function forgetMinedTxs(db: Database, chainTxIds: bigint[], reason: string, at: Date): Promise<void> {
  if (chainTxIds.length === 0) return;
  await db
    .updateTable('chain_txs')
    .set({ status: 'signed', block_number: null, last_error: reason, submitted_at: at, updated_at: at })
    .where('id', 'in', chainTxIds)
    .where('status', 'in', OPEN_TX_STATUSES)
    .execute();
}

/**
 * A `confirmed` transaction the chain lost goes back to the outbox, once: `signed` (its signed bytes are sent
 * again; `submitted_at` restarts its stuck timer) and its rewards `submitted` with `reconciled_at` set, in
 * one database transaction guarded by the old status. False when it had moved already.
 */
export function reopenConfirmedTx(db: Database, tx: ChainTxRow, reason: string, at: Date): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('chain_txs')
      .set({
        status: 'signed',
        current_hash: keccak256(tx.raw_tx as Hex),
        block_number: null,
        gas_used: null,
        confirmed_by: null,
        last_error: reason,
        submitted_at: at,
        updated_at: at,
      })
      .where('id', '=', tx.id)
      .where('status', '=', 'confirmed')
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) return false;
    await trx
      .updateTable('reward_mints')
      .set({ status: 'submitted', reconciled_at: at, updated_at: at })
      .where('chain_tx_id', '=', tx.id)
      .where('status', '=', 'confirmed')
      .execute();
    return true;
  });
}

/** The signer's `confirmed` mint transactions at these nonces, lowest first. */
export function confirmedTxsAt(db: Database, chainId: number, signer: string, nonces: bigint[]): Promise<ChainTxRow[]> {
  if (nonces.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('chain_txs')
    .selectAll()
    .where('chain_id', '=', chainId)
    .where('signer', '=', signer)
    .where('status', '=', 'confirmed')
    .where('nonce', 'in', nonces)
    .orderBy('nonce')
    .execute();
}

/** The highest nonce the ledger holds `confirmed` for this signer (undefined when none). */
export async function maxConfirmedNonce(db: Database, chainId: number, signer: string): Promise<bigint | undefined> {
  const row = await db
    .selectFrom('chain_txs')
    .select((eb) => eb.fn.max('nonce').as('nonce'))
    .where('chain_id', '=', chainId)
    .where('signer', '=', signer)
    .where('status', '=', 'confirmed')
    .executeTakeFirst();
  return row?.nonce === null || row?.nonce === undefined ? undefined : BigInt(row.nonce);
}
