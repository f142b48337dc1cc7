import type { DatabaseHandle } from '../db/database.ts';

/**
 * Runs `work` while holding a PostgreSQL advisory lock named `name`, waiting for it if another process holds
 * it: replicas starting together then deploy the contracts once, one after the other finding what the first
 * recorded. PGlite is one process: `work` runs at once.
 */
export async function withStartupLock<T>(database: DatabaseHandle, name: string, work: () => Promise<T>): Promise<T> {
  if (!database.pool) return work();
  const client = await database.pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [name]);
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [name]);
    }
  } finally {
    client.release();
  }
}
