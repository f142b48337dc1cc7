import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../db/database.ts';
import type { WalletProvider } from './wallet-provider.ts';

/** Wallets derived per turn of the event loop while filling (keeps each turn short). */
const FILL_SLICE = 64;

/** A user id taken from the `users` sequence ahead of need, with the wallet that id derives. */
export interface ReservedWallet {
  userId: bigint;
  address: `0x${string}`;
  idpUserId: string;
}

export interface WalletReserve {
  /** `count` wallets for new users; waits only when the reserve has run dry. */
  take(count: number): Promise<ReservedWallet[]>;
  /** Puts back wallets a caller did not use (their emails already had users), to be taken again. */
  giveBack(wallets: ReservedWallet[]): void;
  /** How many are ready now (tests, metrics). */
  readonly ready: number;
}

/**
 * New users' wallets made before they are needed. With the local HD provider a wallet depends only on the
 * user's id (m/44'/60'/0'/0/<id>), so this reserves ids from the `users` sequence in blocks and derives their
 * addresses in the background (on the address worker thread): a new user's row is then inserted with its
 * wallet in one statement, and no request waits for key derivation or a second `UPDATE users`.
 *
 * Ids come from the same sequence as every other insert, so replicas and other code paths never collide;
 * ids reserved but never used (left in the reserve at shutdown) are gaps in `users.id`, as a rolled-back
 * insert leaves. The reserve starts filling on first use and refills when it falls below half of `size`.
 */
export function createWalletReserve(options: {
  db: Database;
  wallets: WalletProvider;
  logger: Logger;
  size?: number;
}): WalletReserve {
  const size = options.size ?? 512;
  let ready: ReservedWallet[] = [];
  let filling: Promise<void> | undefined;

  async function fill(count: number): Promise<void> {
    const { rows } = await sql<{ id: string }>`
      SELECT nextval(pg_get_serial_sequence('users', 'id'))::text AS id
      FROM generate_series(1, ${count}::int)`.execute(options.db);
    // In slices: each slice's child keys are derived on this thread (HMAC + a modular add), then its
    // addresses travel to the address worker in one message; between slices the event loop serves requests.
    for (let start = 0; start < rows.length; start += FILL_SLICE) {
      const made = await Promise.all(
        rows.slice(start, start + FILL_SLICE).map(async (row) => {
          const userId = BigInt(row.id);
          const wallet = await options.wallets.walletForUser({ userId, email: '' });
          return { userId, address: wallet.address, idpUserId: wallet.idpUserId };
        }),
      );
      ready.push(...made);
    }
  }

  function refill(count: number): Promise<void> {
    filling ??= fill(count)
      .catch((error: unknown) => {
        options.logger.warn({ err: error }, 'could not reserve wallets ahead; new users get theirs on demand');
        throw error;
      })
      .finally(() => {
        filling = undefined;
      });
    return filling;
  }

  function topUp(): void {
    if (ready.length < size / 2 && !filling) refill(size).catch(() => undefined);
  }

  return {
    get ready() {
      return ready.length;
    },
    async take(count) {
      while (ready.length < count) {
        // Wait for a running fill, or start one big enough for this request.
        await (filling ?? refill(Math.max(size, count - ready.length)));
      }
      const taken = ready.slice(0, count);
      ready = ready.slice(count);
      topUp();
      return taken;
    },
    giveBack(wallets) {
      if (wallets.length > 0) ready = [...wallets, ...ready];
    },
  };
}
