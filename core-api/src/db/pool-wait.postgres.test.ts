import express from 'express';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../../test/database.ts';
import { createErrorHandler } from '../http/errors.ts';
import { type DatabaseHandle, isPoolWaitTimeout, openDatabase } from './database.ts';

// Every PostgreSQL connection busy (a saturated process, a leaked client): a request waits at most
// PTS_DB_CONNECT_TIMEOUT_MS for one, then gets 503 with Retry-After, rather than hanging until its client
// gives up.
describe.runIf(testDatabaseKind === 'postgres')('waiting for a free PostgreSQL connection', () => {
  let database: TestDatabase;
  let handle: DatabaseHandle;

  beforeAll(async () => {
    database = await createTestDatabase();
    handle = await openDatabase({ databaseUrl: database.url, poolSize: 1, connectTimeoutMs: 300 });
  });

  afterAll(async () => {
    await handle?.close();
    await database?.close();
  });

  it('fails a query after the wait instead of hanging, and the next one succeeds once a connection is free', async () => {
    const startedAt = performance.now();
    const failure = await handle.db.connection().execute(async () =>
      handle.db
        .selectFrom('users')
        .select('id')
        .execute()
        .then(
          () => undefined,
          (error: unknown) => error,
        ),
    );
    expect(isPoolWaitTimeout(failure)).toBe(true);
    expect(performance.now() - startedAt).toBeLessThan(10_000);
    expect(await handle.db.selectFrom('users').select('id').execute()).toEqual([]);
  });

  it('counts a connection that took too long to open and a server over max_connections as busy too', () => {
    expect(isPoolWaitTimeout(new Error('Connection terminated due to connection timeout'))).toBe(true);
    expect(isPoolWaitTimeout(Object.assign(new Error('sorry, too many clients already'), { code: '53300' }))).toBe(
      true,
    );
    expect(isPoolWaitTimeout(Object.assign(new Error('relation "x" does not exist'), { code: '42P01' }))).toBe(false);
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After through the HTTP error handler', async () => {
    const app = express();
    app.get('/users', async (_req, res, next) => {
      try {
        res.json(await handle.db.selectFrom('users').select('id').execute());
      } catch (error) {
        next(error);
      }
    });
    app.use(createErrorHandler(pino({ level: 'silent' })));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    try {
      const response = await handle.db.connection().execute(async () => fetch(`http://127.0.0.1:${port}/users`));
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('2');
      expect(await response.json()).toMatchObject({
        success: false,
        code: 'SERVICE_UNAVAILABLE',
        details: { reason: 'database_busy' },
      });
      expect((await fetch(`http://127.0.0.1:${port}/users`)).status).toBe(200);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
