import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import { openAcceptBatch } from '../events/events.repository.ts';
import { ensureUsers } from '../users/users.repository.ts';
import { createLocalWalletProvider } from './wallet-provider.ts';
import { createWalletReserve } from './wallet-reserve.ts';

const MNEMONIC = 'test test test test test test test test test test test junk';

let database: TestDatabase;
const wallets = createLocalWalletProvider(MNEMONIC, { addressThreads: 1 });
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await wallets.close();
  await database?.close();
});

describe('wallet reserve', () => {
  it('hands out ids from the users sequence with the wallets those ids derive', async () => {
    const reserve = createWalletReserve({ db: database.db, wallets, logger, size: 8 });
    const taken = await reserve.take(5);
    expect(new Set(taken.map((w) => w.userId)).size).toBe(5);
    for (const wallet of taken) {
      expect(wallet).toEqual({
        userId: wallet.userId,
        ...(await createLocalWalletProvider(MNEMONIC).walletForUser({ userId: wallet.userId, email: '' })),
      });
    }
    // A user created the ordinary way afterwards gets an id no reserved wallet has.
    const ordinary = (await ensureUsers(database.db, ['ordinary@example.com'])).get('ordinary@example.com')!;
    expect(taken.map((w) => w.userId)).not.toContain(ordinary.id);
  });

  it('refills in the background and serves a request larger than its size', async () => {
    const reserve = createWalletReserve({ db: database.db, wallets, logger, size: 4 });
    const big = await reserve.take(10);
    expect(new Set(big.map((w) => w.userId)).size).toBe(10);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(reserve.ready).toBeGreaterThanOrEqual(2);
  });

  it('gives unused wallets out again first, and concurrent takes never share one', async () => {
    const reserve = createWalletReserve({ db: database.db, wallets, logger, size: 16 });
    const first = await reserve.take(3);
    reserve.giveBack(first.slice(1));
    expect(await reserve.take(2)).toEqual(first.slice(1));
    const parallel = await Promise.all(Array.from({ length: 10 }, () => reserve.take(7)));
    const ids = parallel.flat().map((w) => w.userId);
    expect(new Set(ids).size).toBe(70);
  });

  it('the accept batch inserts new users with their reserved wallets and reads existing ones, in one statement', async () => {
    const reserve = createWalletReserve({ db: database.db, wallets, logger, size: 8 });
    const [a, b] = await reserve.take(2);
    const existing = (await ensureUsers(database.db, ['existing@example.com'])).get('existing@example.com')!;
    const opened = await database.db.transaction().execute((trx) =>
      openAcceptBatch(trx, {
        emails: ['new@example.com', 'existing@example.com'],
        newUsers: [
          { email: 'new@example.com', ...a! },
          { email: 'existing@example.com', ...b! },
        ],
        claims: [{ signature: 'sig-1', expiresAt: new Date('2030-01-01T00:00:00Z') }],
        counterKeys: [{ brandId: 'brand', eventType: 'visit', email: 'new@example.com' }],
      }),
    );
    expect([...opened.insertedEmails]).toEqual(['new@example.com']);
    expect([...opened.existingUsers]).toEqual([['existing@example.com', { id: existing.id, walletAddress: null }]]);
    expect([...opened.fresh]).toEqual(['sig-1']);
    expect(opened.counters).toMatchObject([{ brand_id: 'brand', event_type: 'visit', claims: 0, last_claim_at: null }]);
    const rows = await database.db
      .selectFrom('users')
      .select(['id', 'email', 'wallet_address', 'idp_user_id'])
      .where('email', 'in', ['new@example.com', 'existing@example.com'])
      .orderBy('email')
      .execute();
    expect(rows).toEqual([
      { id: existing.id, email: 'existing@example.com', wallet_address: null, idp_user_id: null },
      { id: a!.userId, email: 'new@example.com', wallet_address: a!.address, idp_user_id: a!.idpUserId },
    ]);
  });
});
