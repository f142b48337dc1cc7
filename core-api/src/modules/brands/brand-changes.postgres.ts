import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import type { BrandChange, ChangeTransport } from './brand-changes.ts';

/** The PostgreSQL channel brand changes travel on. */
export const BRAND_CHANGES_CHANNEL = 'pts_brand_changes';

export interface PostgresChangeTransportOptions {
  /** Opens the dedicated LISTEN connection (a pooled one would be handed to other queries). */
  connectionString: string;
  /** Sends NOTIFY; the pool of the process's database. */
  pool: pg.Pool;
  logger: Logger;
  channel?: string;
  /** First and longest wait before reconnecting the LISTEN connection after it broke. */
  reconnectMs?: { first: number; max: number };
  /**
   * Other channels heard on the same dedicated connection (one listening connection per process, whatever
   * it hears): each gets its payloads, and whether the connection listens (false while it is down, since
   * notices sent meanwhile are lost). Member answers use it (modules/ledger/member-answers.ts).
   */
  channels?: ListenedChannel[];
}

/** A channel heard beside the brand changes. */
export interface ListenedChannel {
  readonly channel: string;
  notice(payload: string | undefined): void;
  setListening(listening: boolean): void;
}

interface Notice {
  /** The process that made the change: it has already told its own caches. */
  origin: string;
  kind: BrandChange['kind'];
  brandId?: string | undefined;
}

/**
 * Brand changes between the core-api processes on one PostgreSQL database: `NOTIFY` through the pool once
 * the change committed (the brands service emits after its transaction), `LISTEN` on a dedicated connection
 * that reconnects when it breaks. Notices sent while it was down are lost, so after reconnecting it reports
 * `all` and every cache starts afresh.
 */
export function createPostgresChangeTransport(options: PostgresChangeTransportOptions): ChangeTransport {
  const { logger, pool } = options;
  const channel = options.channel ?? BRAND_CHANGES_CHANNEL;
  const first = options.reconnectMs?.first ?? 100;
  const max = options.reconnectMs?.max ?? 5_000;
  const origin = randomUUID();
  const others = options.channels ?? [];
  const setOthersListening = (value: boolean) => {
    for (const other of others) other.setListening(value);
  };
  let client: pg.Client | undefined;
  let deliver: ((change: BrandChange) => void) | undefined;
  let listening = false;
  let stopped = false;
  let failures = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;

  const toChange = (payload: string | undefined): BrandChange | undefined => {
    try {
      const notice = JSON.parse(payload ?? '') as Notice;
      if (notice.origin === origin) return undefined;
      if (notice.kind === 'all') return { kind: 'all' };
      if ((notice.kind === 'brand' || notice.kind === 'rules') && typeof notice.brandId === 'string') {
        return { kind: notice.kind, brandId: notice.brandId };
      }
    } catch {
      // Reported below: not a notice of ours.
    }
    logger.warn({ channel }, 'ignored a malformed brand change notice');
    return undefined;
  };

  const scheduleReconnect = () => {
    if (stopped || reconnectTimer) return;
    const wait = Math.min(max, first * 2 ** failures);
    failures += 1;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      open().catch(() => {
        // open() scheduled the next attempt when it lost the connection.
      });
    }, wait);
    reconnectTimer.unref();
  };

  const open = async (): Promise<void> => {
    const connection = new pg.Client({ connectionString: options.connectionString, keepAlive: true });
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      if (client === connection) {
        client = undefined;
        setOthersListening(false);
      }
      connection.end().catch(() => undefined);
      if (stopped) return;
      logger.warn({ err: error }, 'brand change listener lost its database connection; reconnecting');
      // Before the first LISTEN succeeded, start() reports the failure instead.
      if (listening) scheduleReconnect();
    };
    connection.on('error', onLost);
    connection.on('end', () => onLost());
    connection.on('notification', (message) => {
      const other = others.find((candidate) => candidate.channel === message.channel);
      if (other) other.notice(message.payload);
      if (message.channel !== channel) return;
      const change = toChange(message.payload);
      if (change) deliver?.(change);
    });
    try {
      await connection.connect();
      await connection.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      for (const other of others) await connection.query(`LISTEN ${pg.escapeIdentifier(other.channel)}`);
    } catch (error) {
      onLost(error as Error);
      throw error;
    }
    if (lost) throw new Error('the brand change listener lost its connection while starting');
    if (stopped) {
      await connection.end().catch(() => undefined);
      return;
    }
    client = connection;
    failures = 0;
    setOthersListening(true);
    if (listening) {
      logger.info('brand change listener reconnected; every brand cache starts afresh');
      deliver?.({ kind: 'all' });
    }
    listening = true;
  };

  return {
    publish(change) {
      if (stopped) return;
      const notice: Notice = { origin, kind: change.kind, brandId: change.brandId };
      pool.query('SELECT pg_notify($1, $2)', [channel, JSON.stringify(notice)]).catch((error: unknown) => {
        // The other processes keep their cached copy until its TTL (PTS_RULE_CACHE_SECONDS) runs out.
        logger.error({ err: error, change }, 'could not notify other processes of a brand change');
      });
    },
    async start(deliverChange) {
      deliver = deliverChange;
      await open();
    },
    async stop() {
      stopped = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      reconnectTimer = undefined;
      const connection = client;
      client = undefined;
      if (connection) setOthersListening(false);
      await connection?.end().catch(() => undefined);
    },
  };
}
