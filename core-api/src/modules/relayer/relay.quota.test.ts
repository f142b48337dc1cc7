import { createManualClock, isAppError } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../../../test/database.ts';
import { type Database, openDatabase } from '../../db/database.ts';
import { type ReservationPlan, reserveRelay } from './relay.service.ts';

// The per-user quota and claim limit are reserved in one database transaction on a locked per-user row:
// concurrent requests — from one process or several (separate connection pools on PostgreSQL) — never
// exceed them.

let database: TestDatabase;
/** A second, independent pool on PostgreSQL (another process's view); the same handle on PGlite. */
let second: Database;
let closeSecond: () => Promise<void> = async () => {};
const clock = createManualClock(new Date('2026-11-22T10:00:00Z'));
const settings = {
  userPerHour: 35,
  waitMs: 0,
  maxGasLimit: 1_000_000,
  maxGasPriceWei: 100_000_000_000n,
  explorerUrl: 'https://explorer.example',
};
const to = '0x3000000000000000000000000000000000000003' as const;

beforeAll(async () => {
  database = await createTestDatabase();
  if (testDatabaseKind === 'postgres' && database.url) {
    const handle = await openDatabase({ databaseUrl: database.url, poolSize: 20 });
    second = handle.db;
    closeSecond = handle.close;
  } else {
    second = database.db;
  }
});

afterAll(async () => {
  await closeSecond();
  await database?.close();
});

async function attempt(db: Database, user: string, plan: ReservationPlan): Promise<string> {
  try {
    await reserveRelay({ db, clock, settings }, { user, userId: 'did:pts:local:1', plan });
    return 'reserved';
  } catch (error) {
    if (isAppError(error)) return error.code;
    throw error;
  }
}

describe('reserveRelay', () => {
  it('40 concurrent relays of one user over two pools: exactly 35 reserved, the rest 429', async () => {
    const user = '0x00000000000000000000000000000000000000a1';
    const plan: ReservationPlan = { to, functionName: 'claimPerk', collectionId: undefined };
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => attempt(i % 2 === 0 ? database.db : second, user, plan)),
    );
    expect(results.filter((result) => result === 'reserved')).toHaveLength(35);
    expect(results.filter((result) => result === 'RATE_LIMIT_EXCEEDED')).toHaveLength(5);
    // Another user is not affected; an hour later the first one may relay again.
    expect(await attempt(database.db, '0x00000000000000000000000000000000000000a2', plan)).toBe('reserved');
    clock.advance(3_600_001);
    expect(await attempt(second, user, plan)).toBe('reserved');
  });

  it('20 concurrent claims of one collection with maxPerUser 2 over two pools: exactly 2 reserved', async () => {
    const user = '0x00000000000000000000000000000000000000b1';
    const plan: ReservationPlan = {
      to,
      functionName: 'claimPerk',
      collectionId: 42n,
      claimLimit: { collectionId: 42n, maxPerUser: 2n, onChain: 0n },
    };
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => attempt(i % 2 === 0 ? database.db : second, user, plan)),
    );
    expect(results.filter((result) => result === 'reserved')).toHaveLength(2);
    expect(results.filter((result) => result === 'CLAIM_LIMIT_REACHED')).toHaveLength(18);
    // Claims already on-chain count too; failed and rejected reservations do not.
    await database.db
      .updateTable('relay_requests')
      .set({ status: 'failed' })
      .where('user_address', '=', user)
      .execute();
    expect(
      await attempt(database.db, user, { ...plan, claimLimit: { collectionId: 42n, maxPerUser: 2n, onChain: 2n } }),
    ).toBe('CLAIM_LIMIT_REACHED');
    expect(await attempt(database.db, user, plan)).toBe('reserved');
  });
});
