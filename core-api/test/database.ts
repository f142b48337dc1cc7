import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { type DatabaseHandle, migrateToLatest, openDatabase, pgliteParsers } from '../src/db/database.ts';

/** Which database the DB-backed tests run on: `PTS_TEST_DB=postgres` selects the machine's PostgreSQL. */
export const testDatabaseKind: 'pglite' | 'postgres' = process.env.PTS_TEST_DB === 'postgres' ? 'postgres' : 'pglite';

/** Admin connection used to create throwaway databases (`PTS_TEST_DATABASE_URL`, else local trust auth). */
const adminUrl =
  process.env.PTS_TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase extends DatabaseHandle {
  /** Connection string of the PostgreSQL test database (undefined on PGlite). */
  url: string | undefined;
}

/**
 * A fresh, migrated database for one test file: in-memory PGlite, or a new PostgreSQL database that is
 * dropped again on close.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (testDatabaseKind === 'pglite') {
    const template = process.env.PTS_TEST_PGLITE_TEMPLATE;
    const pglite = template
      ? await PGlite.create({ loadDataDir: new Blob([readFileSync(template)]), parsers: pgliteParsers })
      : undefined;
    const handle = await openDatabase(pglite ? { pglite } : {});
    await migrateToLatest(handle.db);
    return { ...handle, url: undefined };
  }
  const name = `pts_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ databaseUrl: url.toString(), poolSize: 40 });
  await migrateToLatest(handle.db);
  return {
    ...handle,
    url: url.toString(),
    close: async () => {
      await handle.close();
      const dropper = new pg.Client({ connectionString: adminUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}
