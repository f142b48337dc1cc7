import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../../../test/database.ts';
import { BRAND_CHANGES_CHANNEL, createPostgresChangeTransport } from './brand-changes.postgres.ts';
import { type BrandChange, createChangeNotifier, type StartableChangeNotifier } from './brand-changes.ts';

async function waitFor(what: string, check: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// Two notifiers over one database stand for two core-api processes.
describe.runIf(testDatabaseKind === 'postgres')('brand changes across processes (LISTEN/NOTIFY)', () => {
  let database: TestDatabase;
  const pools: pg.Pool[] = [];
  const notifiers: StartableChangeNotifier[] = [];

  const startProcess = async () => {
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    pools.push(pool);
    const notifier = createChangeNotifier({
      transport: createPostgresChangeTransport({
        connectionString: database.url!,
        pool,
        logger: pino({ level: 'silent' }),
        reconnectMs: { first: 20, max: 200 },
      }),
    });
    await notifier.start();
    notifiers.push(notifier);
    const heard: BrandChange[] = [];
    notifier.subscribe((change) => heard.push(change));
    return { notifier, heard };
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const notifier of notifiers) await notifier.stop();
    await Promise.all(pools.map((pool) => pool.end()));
    await database?.close();
  });

  it("delivers one process's change to the others once, and to its own listeners once", async () => {
    const a = await startProcess();
    const b = await startProcess();
    const c = await startProcess();
    a.notifier.emit({ kind: 'rules', brandId: '0xabc' });
    expect(a.heard).toEqual([{ kind: 'rules', brandId: '0xabc' }]);
    await waitFor('b and c', () => b.heard.length > 0 && c.heard.length > 0, 1_000);
    expect(b.heard).toEqual([{ kind: 'rules', brandId: '0xabc' }]);
    expect(c.heard).toEqual([{ kind: 'rules', brandId: '0xabc' }]);
    // Its own notice came back through PostgreSQL too, and was dropped.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(a.heard).toHaveLength(1);
  });

  it('reconnects after its LISTEN connection is killed, tells its caches to start afresh, then hears again', async () => {
    const a = await startProcess();
    const b = await startProcess();
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const { rowCount } = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND query = $1 AND pid <> pg_backend_pid()`,
        [`LISTEN ${pg.escapeIdentifier(BRAND_CHANGES_CHANNEL)}`],
      );
      // Every listener of this file's processes was cut off, b's among them.
      expect(rowCount).toBeGreaterThanOrEqual(2);
    } finally {
      await admin.end();
    }
    await waitFor('b to resynchronise', () => b.heard.some((change) => change.kind === 'all'));
    a.notifier.emit({ kind: 'brand', brandId: '0xdef' });
    await waitFor('b to hear the next change', () => b.heard.some((change) => change.brandId === '0xdef'), 1_000);
    expect(a.heard.filter((change) => change.brandId === '0xdef')).toHaveLength(1);
  });
});
