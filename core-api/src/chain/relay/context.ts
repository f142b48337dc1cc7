import type { Clock } from '@pts/shared';
import type { Selectable } from 'kysely';
import type { Logger } from 'pino';
import { type Address, getAddress, type Hex, type LocalAccount, parseGwei } from 'viem';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { RelayTransactionsTable } from '../../db/schema.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { ChainPublicClient } from '../deploy.ts';
import type { SignerLock } from '../minter.ts';
import type { RelayTransaction, RelayTxStatus } from '../relayer.types.ts';
import { createTxSender, type TxSender } from '../tx-sender.ts';

// What every relayer action receives first, the way a viem action receives its client. Each action lives in
// its own file of this folder (limits, revert, broadcast, submit, track, wait, gas-usage);
// chain/relayer-sender.ts composes them.

export type RelayerSenderConfig = Pick<
  Config,
  'PTS_RECEIPT_POLL_MS' | 'PTS_RELAYER_STUCK_SECONDS' | 'PTS_RELAYER_MAX_GAS_LIMIT' | 'PTS_RELAYER_MAX_GAS_PRICE_GWEI'
>;

export interface RelayerSenderDeps {
  db: Database;
  chainId: number;
  publicClient: ChainPublicClient;
  /** The relayer key. Never the minter's: the two must not share nonces. */
  account: LocalAccount;
  config: RelayerSenderConfig;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** The minter's address: creation fails when the relayer key is the minter key. */
  minterAddress?: Address;
  /**
   * Elects the one process that signs with the relayer key (acquireSignerLock). Asked before the first
   * signature and again after a refusal; `null` means another process holds the key, and this one refuses
   * to sign (503) rather than race it for nonces. Unset: this process is the only one (PGlite, tests).
   */
  acquireLock?: () => Promise<SignerLock | null>;
  /** Broadcasts a signed transaction; injectable so tests can fail it the way a crash or outage would. */
  sendRawTransaction?: (serializedTransaction: Hex) => Promise<Hex>;
}

export type RelayRow = Selectable<RelayTransactionsTable>;

export const OPEN: RelayTxStatus[] = ['submitted', 'mined'];
export const FINAL: RelayTxStatus[] = ['confirmed', 'failed'];
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RelayerContext {
  db: Database;
  chainId: number;
  publicClient: ChainPublicClient;
  account: LocalAccount;
  /** The signer's address, lower case (as relay_transactions stores it). */
  signer: string;
  config: RelayerSenderConfig;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  sender: TxSender;
  maxGasLimit: bigint;
  maxGasPrice: bigint;
  stuckMs: number;
  /** Rows whose broadcast failed (or that were found open at start): the next tracking pass sends them again. */
  needsBroadcast: Set<string>;
  /** Tells `waitFor` waiters that this row reached a final state (no id: everyone, at stop). */
  notify(id?: string): void;
  stopped: boolean;
}

export function createRelayerContext(deps: RelayerSenderDeps, notify: (id?: string) => void): RelayerContext {
  const { db, chainId, publicClient, account, config } = deps;
  return {
    db,
    chainId,
    publicClient,
    account,
    signer: account.address.toLowerCase(),
    config,
    clock: deps.clock,
    log: deps.logger.child({ component: 'relayer', signer: account.address }),
    metrics: deps.metrics,
    sender: createTxSender({
      db,
      publicClient,
      account,
      chainId,
      table: 'relay_transactions',
      sendRawTransaction: deps.sendRawTransaction,
      readGasPrice: true,
    }),
    maxGasLimit: BigInt(config.PTS_RELAYER_MAX_GAS_LIMIT),
    maxGasPrice: parseGwei(String(config.PTS_RELAYER_MAX_GAS_PRICE_GWEI)),
    stuckMs: config.PTS_RELAYER_STUCK_SECONDS * 1000,
    needsBroadcast: new Set(),
    notify,
    stopped: false,
  };
}

export function loadRelayRow(ctx: RelayerContext, id: string): Promise<RelayRow | undefined> {
  return ctx.db.selectFrom('relay_transactions').selectAll().where('id', '=', id).executeTakeFirst();
}

export function toTransaction(row: RelayRow, from: Address): RelayTransaction {
  return {
    id: row.id,
    status: row.status,
    hash: (row.current_hash as Hex | null) ?? null,
    hashes: (row.hashes ?? []) as Hex[],
    from,
    to: getAddress(row.to_address),
    brandId: row.brand_id,
    userAddress: row.user_address ? getAddress(row.user_address) : null,
    purpose: row.purpose,
    collectionId: row.collection_id === null ? null : BigInt(row.collection_id),
    nonce: row.nonce === null ? null : BigInt(row.nonce),
    gasLimit: row.gas_limit === null ? null : BigInt(row.gas_limit),
    gasUsed: row.gas_used === null ? null : BigInt(row.gas_used),
    effectiveGasPrice: row.effective_gas_price === null ? null : BigInt(row.effective_gas_price),
    blockNumber: row.block_number === null ? null : BigInt(row.block_number),
    error: row.error,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
