import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../../test/database.ts';
import { openDatabase } from '../db/database.ts';
import { withStartupLock } from './startup-lock.ts';

// Issue 26, item 6: with a pool of 1 (or 2 and a short connect wait) every process exited at start: the
// startup lock held a pooled connection while the deployment under it asked the pool for another.

describe.runIf(testDatabaseKind === 'postgres')('startup lock', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });

  it('lets the work under the lock query through a pool of one connection', async () => {
    const small = await openDatabase({ databaseUrl: database.url!, poolSize: 1, connectTimeoutMs: 200 });
    try {
      const answer = await withStartupLock(small, 'pts-test-startup-lock', async () => {
        const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(small.db);
        return rows[0]?.one;
      });
      expect(answer).toBe(1);
    } finally {
      await small.close();
    }
  });

  it('serialises two holders of the same lock', async () => {
    const order: string[] = [];
    const hold = (label: string) =>
      withStartupLock(database, 'pts-test-startup-lock-2', async () => {
        order.push(`${label}:in`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        order.push(`${label}:out`);
      });
    await Promise.all([hold('a'), hold('b')]);
    expect([order[0]?.slice(2), order[1]?.slice(2), order[2]?.slice(2), order[3]?.slice(2)]).toEqual([
      'in',
      'out',
      'in',
      'out',
    ]);
  });
});

describe('PTS_DB_POOL_SIZE', () => {
  it('refuses a pool of 1 at config validation, saying why', async () => {
    const { loadConfig } = await import('../config.ts');
    expect(() => loadConfig({ PTS_DB_POOL_SIZE: '1' })).toThrow(/PTS_DB_POOL_SIZE: at least 2: the minter signer lock/);
    expect(loadConfig({ PTS_DB_POOL_SIZE: '2' }).PTS_DB_POOL_SIZE).toBe(2);
    // Unset or `auto`: sized from the server at open.
    expect(loadConfig({}).PTS_DB_POOL_SIZE).toBeUndefined();
    expect(loadConfig({ PTS_DB_POOL_SIZE: 'auto' }).PTS_DB_POOL_SIZE).toBeUndefined();
  });

  it('sizes the pool automatically so ten processes fit under PostgreSQL default 100 connections', async () => {
    const { automaticPoolSize } = await import('../db/database.ts');
    // 97 connections open to ordinary roles; 10 processes × (7 pooled + 1 listener) + a startup lock each = 90.
    expect(automaticPoolSize(100, 3, 10)).toBe(7);
    expect(10 * (automaticPoolSize(100, 3, 10) + 2)).toBeLessThanOrEqual(97);
    expect(automaticPoolSize(100, 3, 1)).toBe(20);
    expect(automaticPoolSize(100, 3, 40)).toBe(2);
    expect(automaticPoolSize(500, 3, 10)).toBe(20);
  });
});

describe.runIf(testDatabaseKind === 'postgres')('the automatic pool size', () => {
  it('reads max_connections from the server when PTS_DB_POOL_SIZE is unset', async () => {
    const { automaticPoolSize } = await import('../db/database.ts');
    const database = await createTestDatabase();
    const opened = await openDatabase({ databaseUrl: database.url!, processes: 10 });
    try {
      const { rows } = await opened.pool!.query<{ max: number; reserved: number }>(
        "SELECT current_setting('max_connections')::int AS max, current_setting('superuser_reserved_connections')::int AS reserved",
      );
      expect(opened.poolSize).toBe(automaticPoolSize(rows[0]!.max, rows[0]!.reserved, 10));
      expect(opened.pool!.options.max).toBe(opened.poolSize);
    } finally {
      await opened.close();
      await database.close();
    }
  });
});
