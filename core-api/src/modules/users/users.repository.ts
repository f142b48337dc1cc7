import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';

// Users: one row per identity (an email, or a platform identity such as `discord_<id>@…`), created the
// first time anything happens for it. A user's id doubles as its local wallet derivation index; linked
// identities share their account's wallet (modules/accounts). Every function takes many rows and costs one
// statement, so the event path's batches stay cheap.

/**
 * Finds or creates the user rows for these emails; a user's id doubles as the local wallet derivation
 * index. The insert waits for concurrent inserts of the same email to commit, so the select after it sees
 * every row.
 */
export async function ensureUsers(
  db: Database,
  emails: string[],
): Promise<Map<string, { id: bigint; walletAddress: string | null }>> {
  if (emails.length === 0) return new Map();
  await db
    .insertInto('users')
    .values(emails.map((email) => ({ email })))
    .onConflict((oc) => oc.column('email').doNothing())
    .execute();
  return findUsers(db, emails);
}

/** The users of these emails, if they exist. */
export async function findUsers(
  db: Database,
  emails: string[],
): Promise<Map<string, { id: bigint; walletAddress: string | null }>> {
  if (emails.length === 0) return new Map();
  const rows = await db
    .selectFrom('users')
    .select(['id', 'email', 'wallet_address'])
    .where('email', 'in', emails)
    .execute();
  return new Map(rows.map((row) => [row.email, { id: row.id, walletAddress: row.wallet_address }]));
}

/** A user's wallet and identity-provider id, by user id (undefined: no such user). */
export async function findUserWallet(
  db: Database,
  userId: bigint,
): Promise<{ walletAddress: string | null; idpUserId: string | null } | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['wallet_address', 'idp_user_id'])
    .where('id', '=', userId)
    .executeTakeFirst();
  return row && { walletAddress: row.wallet_address, idpUserId: row.idp_user_id };
}

/** The wallet address of the user of this email: undefined when there is no such user or no wallet yet. */
export async function findWalletOf(db: Database, email: string): Promise<string | undefined> {
  const row = await db.selectFrom('users').select('wallet_address').where('email', '=', email).executeTakeFirst();
  return row?.wallet_address ?? undefined;
}

/** Records wallets of users that have none yet; returns the ids this call set (so `walletCreated` is told once). */
export async function setUserWallets(
  db: Database,
  wallets: { userId: bigint; address: string; idpUserId: string }[],
): Promise<Set<bigint>> {
  if (wallets.length === 0) return new Set();
  const values = sql.join(wallets.map((w) => sql`(${String(w.userId)}::bigint, ${w.address}, ${w.idpUserId})`));
  const { rows } = await sql<{ id: bigint }>`
    UPDATE users SET wallet_address = v.address, idp_user_id = v.idp_user_id
    FROM (VALUES ${values}) AS v(id, address, idp_user_id)
    WHERE users.id = v.id AND users.wallet_address IS NULL
    RETURNING users.id`.execute(db);
  return new Set(rows.map((row) => BigInt(row.id)));
}
