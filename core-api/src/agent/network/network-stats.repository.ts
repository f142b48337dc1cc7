import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';

/** Network-wide counts from the real tables (agent tool `get_network_stats`). */
export interface NetworkCounts {
  brands: number;
  /** Users, without agent identities (emails `agent_…`). */
  users: number;
  rewards: { count: number; confirmed: bigint; pending: bigint; failed: bigint; total: bigint };
  acceptedEvents: number;
}

/** One round trip: brand, user, accepted-event and reward-mint totals (amounts exact, as bigint). */
export async function readNetworkCounts(db: Database): Promise<NetworkCounts> {
  const row = await sql<{
    brands: string | number | bigint;
    users: string | number | bigint;
    accepted_events: string | number | bigint;
    mints: string | number | bigint;
    confirmed: string | number | bigint | null;
    pending: string | number | bigint | null;
    failed: string | number | bigint | null;
  }>`
    SELECT
      (SELECT count(*) FROM brands) AS brands,
      (SELECT count(*) FROM users WHERE email NOT LIKE 'agent\\_%') AS users,
      (SELECT count(*) FROM events WHERE status = 'accepted') AS accepted_events,
      m.mints, m.confirmed, m.pending, m.failed
    FROM (
      SELECT count(*) AS mints,
        coalesce(sum(amount) FILTER (WHERE status = 'confirmed'), 0) AS confirmed,
        coalesce(sum(amount) FILTER (WHERE status IN ('pending', 'submitted')), 0) AS pending,
        coalesce(sum(amount) FILTER (WHERE status = 'failed'), 0) AS failed
      FROM reward_mints
    ) AS m`.execute(db);
  const r = row.rows[0]!;
  const big = (value: string | number | bigint | null) => BigInt(value ?? 0);
  const confirmed = big(r.confirmed);
  const pending = big(r.pending);
  return {
    brands: Number(r.brands),
    users: Number(r.users),
    acceptedEvents: Number(r.accepted_events),
    rewards: { count: Number(r.mints), confirmed, pending, failed: big(r.failed), total: confirmed + pending },
  };
}
