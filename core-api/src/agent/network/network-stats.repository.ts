import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { isMemberKey } from '../../modules/accounts/member-keys.ts';
import { readNetworkIssuedPts } from '../../modules/ledger/reward-mints.ts';
import { type BoundToDatabase, bindDatabase } from '../agent-services.ts';

/** Network-wide counts from the real tables (agent tool `get_network_stats`). */
export interface NetworkCounts {
  brands: number;
  /** Users, without agent identities (emails `agent_…`). */
  users: number;
  /** pts issued as reward mints: the member ledger's one definition (modules/ledger readNetworkIssuedPts). */
  rewards: { count: number; confirmed: bigint; pending: bigint; failed: bigint; total: bigint };
  acceptedEvents: number;
}

/** Brand, user and accepted-event counts, and the ledger's issued pts, side by side (amounts exact, as bigint). */
export async function readNetworkCounts(db: Database): Promise<NetworkCounts> {
  const [counts, issued] = await Promise.all([
    sql<{
      brands: string | number | bigint;
      users: string | number | bigint;
      accepted_events: string | number | bigint;
    }>`
      SELECT
        (SELECT count(*) FROM brands) AS brands,
        (SELECT count(*) FROM users WHERE ${isMemberKey(sql.ref('email'))}) AS users,
        (SELECT count(*) FROM events WHERE status = 'accepted') AS accepted_events`.execute(db),
    readNetworkIssuedPts(db),
  ]);
  const r = counts.rows[0]!;
  return {
    brands: Number(r.brands),
    users: Number(r.users),
    acceptedEvents: Number(r.accepted_events),
    rewards: {
      count: issued.mints,
      confirmed: issued.confirmed,
      pending: issued.pending,
      failed: issued.failed,
      total: issued.total,
    },
  };
}

const networkReadFunctions = { readNetworkCounts };

/** The network tools' reads (`get_network_stats`), bound to the handle by compose.ts. */
export type NetworkReads = BoundToDatabase<typeof networkReadFunctions>;

export function createNetworkReads(db: Database): NetworkReads {
  return bindDatabase(db, networkReadFunctions);
}
