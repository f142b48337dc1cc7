import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';

/**
 * pts issued network-wide: the amounts of every reward mint, by state — event rewards and everything else
 * that mints (token purchases, platform awards), so not brand analytics' `ptsIssued`, which counts accepted
 * event rewards only (docs/ledger.md). ONE definition, read here and nowhere else (the agent's
 * get_network_stats answers it): `confirmed` is recorded as minted, `pending` queued or sent (pending or
 * submitted), `failed` failed for good; `total` = confirmed + pending (a failed mint issued nothing). Amounts
 * are whole pts, exact.
 */
export interface NetworkIssuedPts {
  /** Reward mints of any state. */
  mints: number;
  confirmed: bigint;
  pending: bigint;
  failed: bigint;
  total: bigint;
}

/** One grouped scan of `reward_mints`. */
export async function readNetworkIssuedPts(db: Database): Promise<NetworkIssuedPts> {
  const result = await sql<{ mints: string | number; confirmed: string; pending: string; failed: string }>`
    SELECT count(*) AS mints,
           coalesce(sum(amount) FILTER (WHERE status = 'confirmed'), 0)::text AS confirmed,
           coalesce(sum(amount) FILTER (WHERE status IN ('pending', 'submitted')), 0)::text AS pending,
           coalesce(sum(amount) FILTER (WHERE status = 'failed'), 0)::text AS failed
      FROM reward_mints`.execute(db);
  const row = result.rows[0];
  const confirmed = BigInt(row?.confirmed ?? 0);
  const pending = BigInt(row?.pending ?? 0);
  return {
    mints: Number(row?.mints ?? 0),
    confirmed,
    pending,
    failed: BigInt(row?.failed ?? 0),
    total: confirmed + pending,
  };
}

/** Where one event's reward mint stands, and the hash of the transaction that carries it once sent. */
export interface RewardMintState {
  status: 'pending' | 'submitted' | 'confirmed' | 'failed';
  transactionHash: string | null;
}

/** The mint state of each of `eventIds` that has a mint (events without one are absent), one statement. */
export async function readRewardMintStates(db: Database, eventIds: string[]): Promise<Map<string, RewardMintState>> {
  if (eventIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('reward_mints')
    .leftJoin('chain_txs', 'chain_txs.id', 'reward_mints.chain_tx_id')
    .select(['reward_mints.event_id', 'reward_mints.status', 'chain_txs.current_hash'])
    .where('reward_mints.event_id', 'in', eventIds)
    .execute();
  return new Map(
    rows.flatMap((row) =>
      row.event_id === null
        ? []
        : [[row.event_id, { status: row.status, transactionHash: row.current_hash ?? null }] as const],
    ),
  );
}
