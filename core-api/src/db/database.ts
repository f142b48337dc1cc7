import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, type Migration, type MigrationProvider, Migrator, PostgresDialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import * as coreSpine from './migrations/2026_11_22_0000_core_spine.ts';
import * as payments from './migrations/2026_11_22_0100_payments.ts';
import * as webhooks from './migrations/2026_11_22_0200_webhooks.ts';
import * as oauthIdentities from './migrations/2026_11_22_0300_oauth_identities.ts';
import * as relayTransactions from './migrations/2026_11_22_0400_relay_transactions.ts';
import * as relayRequests from './migrations/2026_11_22_0410_relay_requests.ts';
import * as perks from './migrations/2026_11_22_0500_perks.ts';
import * as streaks from './migrations/2026_11_22_0600_streaks.ts';
import * as activityLeaderboards from './migrations/2026_11_22_0700_activity_leaderboards.ts';
import * as achievements from './migrations/2026_11_22_0800_achievements.ts';
import * as perkRedemptions from './migrations/2026_11_22_0900_perk_redemptions.ts';
import * as accountLinks from './migrations/2026_11_22_1000_account_links.ts';
import * as community from './migrations/2026_11_22_1100_community.ts';
import * as signedResponses from './migrations/2026_11_24_0000_signed_responses.ts';
import * as brandUnsignedEvents from './migrations/2026_11_24_0100_brand_unsigned_events.ts';
import * as rateLimits from './migrations/2026_11_24_0200_rate_limits.ts';
import * as rewardMintsReconciled from './migrations/2026_11_24_0230_reward_mints_reconciled.ts';
import * as eventExternalIds from './migrations/2026_11_24_2110_event_external_ids.ts';
import * as brandXHandle from './migrations/2026_11_24_2115_brand_x_handle.ts';
import * as displayNames from './migrations/2026_11_25_0000_display_names.ts';
import * as customRuleIds from './migrations/2026_11_25_0100_custom_rule_ids.ts';
import * as drops from './migrations/2026_11_25_0200_drops.ts';
import * as agentKeys from './migrations/2026_11_26_0100_agent_keys.ts';
import * as agentIntelligence from './migrations/2026_11_26_0400_agent_intelligence.ts';
import * as agentAnalytics from './migrations/2026_11_27_0100_agent_analytics.ts';
import * as agentOnboarding from './migrations/2026_11_27_0210_agent_onboarding.ts';
import * as agentRewardClaims from './migrations/2026_11_28_0100_agent_reward_claims.ts';
import * as growthLeads from './migrations/2026_11_28_0200_growth_leads.ts';
import * as agentReadIndexes from './migrations/2026_11_28_0300_agent_read_indexes.ts';
import * as memberEventsCovering from './migrations/2026_11_29_0100_member_events_covering.ts';
import * as brandKeyGrace from './migrations/2026_12_01_0301_brand_key_grace.ts';
import * as onboardingEvidence from './migrations/2026_12_01_0302_onboarding_evidence.ts';
import * as perkRedemptionIdempotency from './migrations/2026_12_01_0401_perk_redemption_idempotency.ts';
import * as rewardMintsWalletUnconfirmed from './migrations/2026_12_01_0500_reward_mints_wallet_unconfirmed.ts';
import * as chainTxsConfirmedBy from './migrations/2026_12_01_0601_chain_txs_confirmed_by.ts';
import * as portalAuth from './migrations/2026_12_01_0700_portal_auth.ts';
import * as auditBrand from './migrations/2026_12_02_f01_audit_brand.ts';
import * as perkWindow from './migrations/2026_12_02_g01_perk_window.ts';
import * as portalOperators from './migrations/2026_12_04_f01_portal_operators.ts';
import * as memberChangeNotices from './migrations/2026_12_04_h01_member_change_notices.ts';
import * as brandRollups from './migrations/2026_12_05_a01_brand_rollups.ts';
import * as agentKeyChangeNotices from './migrations/2026_12_05_r01_agent_key_change_notices.ts';
import * as leaderboardChangeNotices from './migrations/2026_12_05_s01_leaderboard_change_notices.ts';
import * as archiveAndBlock from './migrations/2026_12_07_t01_archive_and_block.ts';
import * as rateRules from './migrations/2026_12_07_u01_rate_rules.ts';
import * as memberTotals from './migrations/2026_12_07_v01_member_totals.ts';
import * as reversals from './migrations/2026_12_07_w01_reversals.ts';
import * as shopify from './migrations/2026_12_07_x01_shopify.ts';
import * as tiers from './migrations/2026_12_07_y01_tiers.ts';
import * as rollupAccounts from './migrations/2026_12_07_z01_rollup_accounts.ts';
import * as deductions from './migrations/2026_12_08_c01_deductions.ts';
import * as shopifyRefunds from './migrations/2026_12_08_d01_shopify_refunds.ts';
import * as referrals from './migrations/2026_12_08_g01_referrals.ts';
import * as externalIdEvents from './migrations/2026_12_08_h01_external_id_events.ts';
import type { DB } from './schema.ts';

export type Database = Kysely<DB>;
export type DatabaseKind = 'pglite' | 'postgres';

export interface DatabaseHandle {
  db: Database;
  kind: DatabaseKind;
  /** The embedded instance when kind is `pglite` (dumps, clones). */
  pglite?: PGlite;
  /** The connection pool when kind is `postgres` (rate-limit counters share it). */
  pool?: pg.Pool;
  /** The connection string when kind is `postgres` (a dedicated LISTEN connection opens its own). */
  connectionString?: string;
  /** The pool's size when kind is `postgres` (chosen automatically unless configured). */
  poolSize?: number;
  /**
   * Ends the start-up patience: from now on a query waits PTS_DB_CONNECT_TIMEOUT_MS for a connection (and the
   * HTTP layer answers 503 past it). Called once the process listens; absent on PGlite.
   */
  endStartup?: () => void;
  /** Runs a cheap query; throws when the database is unreachable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Migrations in the order they run. Names sort by their timestamp prefix. */
const migrations: Record<string, Migration> = {
  '2026_11_22_0000_core_spine': coreSpine,
  '2026_11_22_0100_payments': payments,
  '2026_11_22_0200_webhooks': webhooks,
  '2026_11_22_0300_oauth_identities': oauthIdentities,
  '2026_11_22_0400_relay_transactions': relayTransactions,
  '2026_11_22_0410_relay_requests': relayRequests,
  '2026_11_22_0500_perks': perks,
  '2026_11_22_0600_streaks': streaks,
  '2026_11_22_0700_activity_leaderboards': activityLeaderboards,
  '2026_11_22_0800_achievements': achievements,
  '2026_11_22_0900_perk_redemptions': perkRedemptions,
  '2026_11_22_1100_community': community,
  '2026_11_22_1000_account_links': accountLinks,
  '2026_11_24_0000_signed_responses': signedResponses,
  '2026_11_24_0100_brand_unsigned_events': brandUnsignedEvents,
  '2026_11_24_0200_rate_limits': rateLimits,
  '2026_11_24_0230_reward_mints_reconciled': rewardMintsReconciled,
  '2026_11_24_2110_event_external_ids': eventExternalIds,
  '2026_11_24_2115_brand_x_handle': brandXHandle,
  '2026_11_25_0000_display_names': displayNames,
  '2026_11_25_0100_custom_rule_ids': customRuleIds,
  '2026_11_25_0200_drops': drops,
  '2026_11_26_0100_agent_keys': agentKeys,
  '2026_11_26_0400_agent_intelligence': agentIntelligence,
  '2026_11_27_0100_agent_analytics': agentAnalytics,
  '2026_11_27_0210_agent_onboarding': agentOnboarding,
  '2026_11_28_0100_agent_reward_claims': agentRewardClaims,
  '2026_11_28_0200_growth_leads': growthLeads,
  '2026_11_28_0300_agent_read_indexes': agentReadIndexes,
  '2026_11_29_0100_member_events_covering': memberEventsCovering,
  '2026_12_01_0301_brand_key_grace': brandKeyGrace,
  '2026_12_01_0302_onboarding_evidence': onboardingEvidence,
  '2026_12_01_0401_perk_redemption_idempotency': perkRedemptionIdempotency,
  '2026_12_01_0500_reward_mints_wallet_unconfirmed': rewardMintsWalletUnconfirmed,
  '2026_12_01_0601_chain_txs_confirmed_by': chainTxsConfirmedBy,
  '2026_12_01_0700_portal_auth': portalAuth,
  '2026_12_02_f01_audit_brand': auditBrand,
  '2026_12_02_g01_perk_window': perkWindow,
  '2026_12_04_f01_portal_operators': portalOperators,
  '2026_12_04_h01_member_change_notices': memberChangeNotices,
  '2026_12_05_a01_brand_rollups': brandRollups,
  '2026_12_05_r01_agent_key_change_notices': agentKeyChangeNotices,
  '2026_12_05_s01_leaderboard_change_notices': leaderboardChangeNotices,
  '2026_12_07_t01_archive_and_block': archiveAndBlock,
  '2026_12_07_u01_rate_rules': rateRules,
  '2026_12_07_v01_member_totals': memberTotals,
  '2026_12_07_w01_reversals': reversals,
  '2026_12_07_x01_shopify': shopify,
  '2026_12_07_y01_tiers': tiers,
  '2026_12_07_z01_rollup_accounts': rollupAccounts,
  '2026_12_08_d01_shopify_refunds': shopifyRefunds,
  '2026_12_08_g01_referrals': referrals,
  '2026_12_08_h01_external_id_events': externalIdEvents,
  '2026_12_08_c01_deductions': deductions,
};

const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};

const INT8_OID = 20;
pg.types.setTypeParser(INT8_OID, (value) => BigInt(value));

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Whether `error` says the database is busy rather than broken: pg-pool's refusal after waiting
 * `connectTimeoutMs` for a free connection, a new connection that took longer than that to open, or the
 * server refusing a connection over its `max_connections` (SQLSTATE 53300).
 */
export function isPoolWaitTimeout(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    error.message === 'timeout exceeded when trying to connect' ||
    error.message === 'Connection terminated due to connection timeout' ||
    (error as { code?: unknown }).code === '53300'
  );
}

/** The most connections a process's pool opens when its size is automatic (the former fixed default). */
const AUTO_POOL_MAX = 20;

/**
 * The automatic pool size: the server's connections open to ordinary roles, shared by `processes`, less the
 * one connection each process keeps outside its pool (the brand-change listener), within 2–20. PostgreSQL's
 * default 100 (3 reserved) gives 7 for 10 processes, so ten replicas fit with room for the startup lock.
 */
export function automaticPoolSize(maxConnections: number, reserved: number, processes: number): number {
  const perProcess = Math.floor((maxConnections - reserved) / processes) - 2;
  return Math.min(AUTO_POOL_MAX, Math.max(2, perProcess));
}

/** PGlite options that make it read int8 as bigint, like the `pg` driver above. */
export const pgliteParsers = { [INT8_OID]: (value: string) => BigInt(value) };

export interface OpenDatabaseOptions {
  /** `postgres://…` selects PostgreSQL; anything else uses embedded PGlite. */
  databaseUrl?: string | undefined;
  /** PGlite data directory; `undefined` keeps PGlite in memory (tests). */
  pgliteDir?: string | undefined;
  /** Pool size for PostgreSQL; unset: automaticPoolSize for `processes` (read from the server at open). */
  poolSize?: number | undefined;
  /** Processes sharing the server, for the automatic pool size (default 10). */
  processes?: number;
  /**
   * A longer wait for a connection until the handle's endStartup(): start-up work (migrations, deployment, the
   * first election) of replicas starting together on a small pool queues behind each other, and opening a
   * connection on a loaded machine can take longer than a short `connectTimeoutMs` (issue 26 item 6).
   */
  startupConnectTimeoutMs?: number;
  /**
   * Milliseconds a query waits for a free PostgreSQL connection before it fails (default 10,000); the HTTP
   * layer answers that failure with 503 and Retry-After instead of letting the request hang.
   */
  connectTimeoutMs?: number;
  /** Pre-built PGlite instance (tests clone a migrated template). */
  pglite?: PGlite;
  /**
   * Hears errors of pooled PostgreSQL connections (the server restarting or terminating them). Without a
   * listener such an error would crash the process; the pool replaces the connection on next use.
   */
  onConnectionError?: (error: Error) => void;
}

/** Opens the database chosen by config: PostgreSQL when a URL is given, PGlite otherwise. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl && /^postgres(ql)?:\/\//.test(options.databaseUrl)) {
    const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? AUTO_POOL_MAX,
      connectionTimeoutMillis: Math.max(connectTimeoutMs, options.startupConnectTimeoutMs ?? 0),
    });
    const onConnectionError = options.onConnectionError ?? (() => {});
    pool.on('error', onConnectionError);
    pool.on('connect', (client) => client.on('error', onConnectionError));
    if (options.poolSize === undefined) {
      const { rows } = await pool.query<{ max: number; reserved: number }>(
        `SELECT current_setting('max_connections')::int AS max,
                current_setting('superuser_reserved_connections')::int AS reserved`,
      );
      // pg-pool reads `max` at every checkout.
      pool.options.max = automaticPoolSize(rows[0]!.max, rows[0]!.reserved, options.processes ?? 10);
    }
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return {
      db,
      kind: 'postgres',
      pool,
      poolSize: pool.options.max,
      endStartup: () => {
        pool.options.connectionTimeoutMillis = connectTimeoutMs;
      },
      connectionString: options.databaseUrl,
      ping: async () => {
        await pool.query('SELECT 1');
      },
      close: () => db.destroy(),
    };
  }
  let pglite = options.pglite;
  if (!pglite) {
    if (options.pgliteDir) mkdirSync(options.pgliteDir, { recursive: true });
    pglite = await PGlite.create(options.pgliteDir, { parsers: pgliteParsers });
  }
  const instance = pglite;
  const db = new Kysely<DB>({ dialect: new PGliteDialect(instance) });
  return {
    db,
    kind: 'pglite',
    pglite: instance,
    ping: async () => {
      await instance.query('SELECT 1');
    },
    close: () => db.destroy(),
  };
}

/** Brings the schema up to date; safe to call at every start. */
export async function migrateToLatest(db: Database): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
