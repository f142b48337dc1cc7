import pg from 'pg';
import type { DatabaseHandle } from '../db/database.ts';

/**
 * Runs `work` while holding a PostgreSQL advisory lock named `name`, waiting for it if another process holds
 * it: replicas starting together then deploy the contracts once, one after the other finding what the first
 * recorded. PGlite is one process: `work` runs at once.
 *
 * The lock is held on a connection of its own, outside the pool: `work` queries through the pool, and with a
 * small pool (PTS_DB_POOL_SIZE 1 or 2, a short PTS_DB_CONNECT_TIMEOUT_MS) a pooled lock connection left it
 * nothing to query with, so the start failed (issue 26).
 */
export async function withStartupLock<T>(database: DatabaseHandle, name: string, work: () => Promise<T>): Promise<T> {
  if (!database.pool) return work();
  const { connectionString, host, port, user, password, database: dbName, ssl } = database.pool.options;
  const client = new pg.Client({ connectionString, host, port, user, password, database: dbName, ssl });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [name]);
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [name]);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
