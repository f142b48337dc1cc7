import type { Kysely } from 'kysely';
import type { DB } from './schema.ts';

/**
 * Runs `work` in a transaction, or directly when `db` already is one, so a caller holding a transaction
 * (a seed, a test) can compose the functions that use it. Listeners told after this returns hear it, inside a
 * caller's transaction, before its commit.
 */
export function inTransaction<T>(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}
