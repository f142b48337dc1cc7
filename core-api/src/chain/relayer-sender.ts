import { randomUUID } from 'node:crypto';
import { AppError, type Clock } from '@pts/shared';
import type { Selectable } from 'kysely';
import type { Logger } from 'pino';
import {
  type Abi,
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  formatGwei,
  getAddress,
  type Hex,
  type LocalAccount,
  parseGwei,
  type TransactionReceipt,
} from 'viem';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { RelayTransactionsTable } from '../db/schema.ts';
import type { Metrics } from '../observability/metrics.ts';
import { businessEscrowAbi, perkNFTAbi, pointsSaleAbi, rewardTokenAbi } from './artifacts/index.ts';
import type { ChainPublicClient } from './deploy.ts';
import type { SignerLock } from './minter.ts';
import type {
  BrandGasUsage,
  RelayerSender,
  RelayTransaction,
  RelayTxRequest,
  RelayTxStatus,
  SimulationResult,
} from './relayer.types.ts';
import { createTxSender, errorReason, minOf, replacementFees } from './tx-sender.ts';

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

type Row = Selectable<RelayTransactionsTable>;

const OPEN: RelayTxStatus[] = ['submitted', 'mined'];
const FINAL: RelayTxStatus[] = ['confirmed', 'failed'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Estimates are raised by 20% before signing: state can change between estimate and inclusion. */
const GAS_MARGIN_PERCENT = 120n;
/** Every contract the relayer may call: their custom errors decode a revert into a readable reason. */
const KNOWN_ABIS: Abi[] = [rewardTokenAbi, perkNFTAbi, pointsSaleAbi, businessEscrowAbi] as Abi[];
function formatArg(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return value;
  return JSON.stringify(value, (_key, inner) => (typeof inner === 'bigint' ? inner.toString() : inner));
}

/** Finds revert data anywhere in a viem error chain. */
function revertData(error: unknown): Hex | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 8; depth++) {
    const entry = current as { data?: unknown; cause?: unknown };
    if (typeof entry.data === 'string' && /^0x[0-9a-fA-F]*$/.test(entry.data) && entry.data.length >= 10) {
      return entry.data as Hex;
    }
    if (entry.data && typeof entry.data === 'object' && 'data' in entry.data) {
      const inner = (entry.data as { data?: unknown }).data;
      if (typeof inner === 'string' && /^0x[0-9a-fA-F]*$/.test(inner) && inner.length >= 10) return inner as Hex;
    }
    current = entry.cause;
  }
  return undefined;
}

/**
 * Turns a revert into `{reason, errorName}`: custom errors decode against the platform's ABIs
 * (`InsufficientAllowance(0xab…, 0, 50)`), `Error(string)` gives its message, anything else its text.
 */
export function decodeRevert(error: unknown): { reason: string; errorName?: string } {
  if (error instanceof BaseError) {
    const reverted = error.walk((inner) => inner instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName) {
      const args = (reverted.data.args ?? []).map(formatArg).join(', ');
      return { reason: `${reverted.data.errorName}(${args})`, errorName: reverted.data.errorName };
    }
  }
  const data = revertData(error);
  if (data) {
    for (const abi of KNOWN_ABIS) {
      try {
        const decoded = decodeErrorResult({ abi, data });
        const args = (decoded.args ?? []).map(formatArg).join(', ');
        if (decoded.errorName === 'Error') return { reason: String(decoded.args?.[0] ?? 'reverted') };
        return { reason: `${decoded.errorName}(${args})`, errorName: decoded.errorName };
      } catch {
        // not this ABI's error
      }
    }
    try {
      const decoded = decodeErrorResult({ abi: [], data });
      if (decoded.errorName === 'Error') return { reason: String(decoded.args?.[0] ?? 'reverted') };
      if (decoded.errorName === 'Panic')
        return { reason: `Panic(${formatArg(decoded.args?.[0])})`, errorName: 'Panic' };
    } catch {
      // unknown selector
    }
    return { reason: `reverted with unknown error data ${data.slice(0, 10)}` };
  }
  return { reason: errorReason(error) };
}

function toTransaction(row: Row, from: Address): RelayTransaction {
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

/**
 * The relayer's transaction sender (docs/relayer.md "Transaction lifecycle"): one `relay_transactions` row
 * per transaction, written `queued` before anything else and updated with the signed raw transaction and its
 * hash before the broadcast, so a crash at any point leaves a row the next start can finish. Nonces are
 * allocated one at a time under an in-process lock, starting from max(chain pending count, highest recorded
 * nonce + 1). A poller follows receipts for every hash a row was signed with and re-signs rows that stay
 * unmined past PTS_RELAYER_STUCK_SECONDS with higher fees (same nonce).
 */
export function createRelayerSender(deps: RelayerSenderDeps): RelayerSender {
  const { db, chainId, publicClient, account, config, clock, logger, metrics } = deps;
  if (deps.minterAddress && deps.minterAddress.toLowerCase() === account.address.toLowerCase()) {
    throw new Error(
      'The relayer key is the minter key: set PTS_RELAYER_PRIVATE_KEY to a key of its own (they must not share nonces)',
    );
  }
  const signer = account.address.toLowerCase();
  const log = logger.child({ component: 'relayer', signer: account.address });
  const sender = createTxSender({
    db,
    publicClient,
    account,
    chainId,
    table: 'relay_transactions',
    sendRawTransaction: deps.sendRawTransaction,
    readGasPrice: true,
  });
  const maxGasLimit = BigInt(config.PTS_RELAYER_MAX_GAS_LIMIT);
  const maxGasPrice = parseGwei(String(config.PTS_RELAYER_MAX_GAS_PRICE_GWEI));
  const stuckMs = config.PTS_RELAYER_STUCK_SECONDS * 1000;

  let tracking: Promise<void> | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let stopped = false;
  let lock: SignerLock | null | undefined = deps.acquireLock ? undefined : { release: async () => {} };
  /** Rows whose broadcast failed (or that were found open at start): the next tracking pass sends them again. */
  const needsBroadcast = new Set<string>();
  /** Waiters of `waitFor`: told the id of each row that reached a final state (no id: everyone, at stop). */
  const listeners = new Set<(id?: string) => void>();
  let lastTrackAt = Number.NEGATIVE_INFINITY;

  function notify(id?: string): void {
    for (const listener of [...listeners]) listener(id);
  }

  let electing: Promise<SignerLock | null> | undefined;
  /** One election at a time: concurrent first submits share it (a second lock attempt would fail against our own). */
  async function ensureElected(): Promise<void> {
    if (lock) return;
    electing ??= deps.acquireLock!().finally(() => {
      electing = undefined;
    });
    const acquired = await electing;
    if (acquired && !lock) {
      lock = acquired;
      log.info('holding the relayer signer lock');
    }
    if (!lock) {
      throw new AppError('SERVICE_UNAVAILABLE', 'Another process signs with the relayer key; retry on that instance', {
        signer: account.address,
      });
    }
  }

  /** Fees to sign with, never above the cap; refuses (503) when the network itself is above the cap. */
  async function cappedFees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    const fees = await sender.fees();
    const networkGasPrice = fees.networkGasPrice ?? fees.maxFeePerGas;
    if (networkGasPrice > maxGasPrice) {
      metrics.relayTransactions.inc({ status: 'refused_gas_price' });
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `Network gas price ${formatGwei(networkGasPrice)} gwei is above the relayer's cap of ${config.PTS_RELAYER_MAX_GAS_PRICE_GWEI} gwei; retry later`,
        {
          reason: 'gas_price_above_cap',
          networkGasPriceGwei: formatGwei(networkGasPrice),
          maxGasPriceGwei: String(config.PTS_RELAYER_MAX_GAS_PRICE_GWEI),
        },
        { retryAfter: 60 },
      );
    }
    const maxFeePerGas = minOf(fees.maxFeePerGas, maxGasPrice);
    return { maxFeePerGas, maxPriorityFeePerGas: minOf(fees.maxPriorityFeePerGas, maxFeePerGas) };
  }

  function checkGasLimit(gasLimit: bigint | undefined): void {
    if (gasLimit === undefined) return;
    if (gasLimit > maxGasLimit || gasLimit <= 0n) {
      throw new AppError(
        'VALIDATION_ERROR',
        `gasLimit must be between 1 and ${maxGasLimit} (the relayer's per-transaction maximum)`,
        { field: 'gasLimit', value: gasLimit.toString(), errors: [`gasLimit must be at most ${maxGasLimit}`] },
      );
    }
  }

  async function simulate(
    request: Pick<RelayTxRequest, 'to' | 'data' | 'value' | 'gasLimit'>,
  ): Promise<SimulationResult> {
    checkGasLimit(request.gasLimit);
    const call = {
      account: account.address,
      to: request.to,
      data: request.data,
      value: request.value ?? 0n,
      ...(request.gasLimit ? { gas: request.gasLimit } : {}),
    };
    try {
      await publicClient.call(call);
      const gasEstimate = await publicClient.estimateGas(call);
      return { ok: true, gasEstimate };
    } catch (error) {
      const decoded = decodeRevert(error);
      return { ok: false, ...decoded };
    }
  }

  async function load(id: string): Promise<Row | undefined> {
    return db.selectFrom('relay_transactions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async function markFailed(id: string, reason: string, blockNumber: bigint | null = null): Promise<void> {
    await db
      .updateTable('relay_transactions')
      .set({ status: 'failed', error: reason, block_number: blockNumber, updated_at: clock.now() })
      .where('id', '=', id)
      .where('status', 'not in', FINAL)
      .execute();
    metrics.relayTransactions.inc({ status: 'failed' });
    notify(id);
  }

  /** Sends one signed transaction; failures are remembered so the tracker re-sends. */
  async function broadcast(id: string, raw: Hex): Promise<void> {
    const result = await sender.send(raw);
    if (result.outcome === 'sent') metrics.relayTransactions.inc({ status: 'submitted' });
    // Known: the node has it. Nonce used: ours was mined (the tracker finds the receipt) or another key
    // user took the nonce (the sender re-reads it).
    if (result.outcome !== 'failed') {
      needsBroadcast.delete(id);
    } else {
      const text = errorReason(result.error);
      needsBroadcast.add(id);
      metrics.relayTransactions.inc({ status: 'send_failed' });
      log.warn({ id, error: text }, 'relay broadcast failed; will retry');
      await db
        .updateTable('relay_transactions')
        .set({ error: `broadcast failed: ${text}`, updated_at: clock.now() })
        .where('id', '=', id)
        .where('status', '=', 'submitted')
        .execute();
    }
  }

  /** Sends in nonce order (TxSender.send): a node may drop a transaction that arrives far ahead of its predecessor. */
  function enqueueBroadcast(id: string, raw: Hex): Promise<void> {
    return broadcast(id, raw);
  }

  /** Best effort: replays a reverted call on the state before its block to learn the reason. */
  async function revertReason(row: Row, receipt: TransactionReceipt): Promise<string> {
    try {
      await publicClient.call({
        account: account.address,
        to: row.to_address as Address,
        data: row.data as Hex,
        value: BigInt(row.value),
        gas: row.gas_limit ? BigInt(row.gas_limit) : undefined,
        blockNumber: receipt.blockNumber - 1n,
      });
      return `reverted in block ${receipt.blockNumber}`;
    } catch (error) {
      return decodeRevert(error).reason;
    }
  }

  async function settleReceipt(row: Row, receipt: TransactionReceipt): Promise<void> {
    const common = {
      current_hash: receipt.transactionHash,
      gas_used: receipt.gasUsed.toString(),
      effective_gas_price: receipt.effectiveGasPrice.toString(),
      block_number: receipt.blockNumber,
      updated_at: clock.now(),
    };
    // Recorded as mined first, so the gas is on the row whatever happens next; depth 1: confirmed at once.
    const status: RelayTxStatus = receipt.status === 'success' ? 'confirmed' : 'failed';
    const error = status === 'failed' ? await revertReason(row, receipt) : null;
    const updated = await db
      .updateTable('relay_transactions')
      .set({ ...common, status, error })
      .where('id', '=', row.id)
      .where('status', 'in', OPEN)
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) return;
    needsBroadcast.delete(row.id);
    metrics.relayTransactions.inc({ status });
    metrics.relayGasUsed.inc({ brand: row.brand_id ?? 'none' }, Number(receipt.gasUsed));
    if (status === 'failed')
      log.warn({ id: row.id, hash: receipt.transactionHash, error }, 'relayed transaction reverted');
    notify(row.id);
  }

  /** Re-signs the same nonce with +25% on both fees (at least the network's), never above the cap. */
  async function replace(row: Row): Promise<void> {
    const fees = replacementFees(
      {
        maxFeePerGas: BigInt(row.max_fee_per_gas ?? '0'),
        maxPriorityFeePerGas: BigInt(row.max_priority_fee_per_gas ?? '0'),
      },
      await sender.fees(true),
      maxGasPrice,
    );
    // Nodes refuse a replacement under +12.5% on both fields (geth 10%, others 12.5%).
    if (!fees) {
      log.warn(
        { id: row.id, nonce: Number(row.nonce), maxGasPrice: maxGasPrice.toString() },
        'stuck relay transaction cannot be bumped further: the gas price cap is reached',
      );
      return;
    }
    const { maxFeePerGas, maxPriorityFeePerGas } = fees;
    const { raw, hash } = await sender.sign({
      nonce: BigInt(row.nonce ?? 0),
      to: row.to_address as Address,
      data: row.data as Hex,
      value: BigInt(row.value),
      gas: BigInt(row.gas_limit ?? maxGasLimit),
      ...fees,
    });
    const now = clock.now();
    const updated = await db
      .updateTable('relay_transactions')
      .set({
        hashes: JSON.stringify([...(row.hashes ?? []), hash]),
        current_hash: hash,
        raw_tx: raw,
        max_fee_per_gas: maxFeePerGas.toString(),
        max_priority_fee_per_gas: maxPriorityFeePerGas.toString(),
        submitted_at: now,
        updated_at: now,
      })
      .where('id', '=', row.id)
      .where('current_hash', '=', row.current_hash)
      .where('status', 'in', OPEN)
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) return;
    metrics.relayTransactions.inc({ status: 'replaced' });
    log.warn(
      { id: row.id, nonce: Number(row.nonce), previous: row.current_hash, hash, maxFeePerGas: maxFeePerGas.toString() },
      'replaced stuck relay transaction',
    );
    await enqueueBroadcast(row.id, raw);
  }

  async function trackOnce(): Promise<void> {
    lastTrackAt = performance.now();
    const open = await db
      .selectFrom('relay_transactions')
      .selectAll()
      .where('chain_id', '=', chainId)
      .where('signer', '=', signer)
      .where('status', 'in', OPEN)
      .orderBy('nonce')
      .execute();
    if (open.length === 0) return;
    // Read before the receipts: a transaction mined in between then shows a receipt instead of looking dropped.
    const confirmedNonce = BigInt(
      await publicClient.getTransactionCount({ address: account.address, blockTag: 'latest' }),
    );
    const receipts = await Promise.all(
      open.map(async (row) =>
        (await Promise.all((row.hashes ?? []).map((hash) => sender.receipt(hash as Hex)))).find((r) => r !== null),
      ),
    );
    for (const [index, row] of open.entries()) {
      const receipt = receipts[index];
      const submittedAt = row.submitted_at ? new Date(row.submitted_at).getTime() : 0;
      const age = clock.now().getTime() - submittedAt;
      if (receipt) {
        await settleReceipt(row, receipt);
      } else if (row.nonce !== null && BigInt(row.nonce) < confirmedNonce && age >= stuckMs) {
        await markFailed(row.id, `dropped: nonce ${row.nonce} was used by another transaction`);
      } else if (age >= stuckMs) {
        await replace(row);
      } else if (needsBroadcast.has(row.id) && row.raw_tx) {
        await enqueueBroadcast(row.id, row.raw_tx as Hex);
      }
    }
  }

  function track(): Promise<void> {
    tracking ??= trackOnce().finally(() => {
      tracking = undefined;
    });
    return tracking;
  }

  /** Crash recovery: rows a previous run recorded are sent again (a no-op for those the node already has). */
  async function recover(): Promise<void> {
    const now = clock.now();
    // A queued row never got a nonce: its caller is gone, and nothing was signed for it.
    await db
      .updateTable('relay_transactions')
      .set({ status: 'failed', error: 'interrupted before signing (process restarted)', updated_at: now })
      .where('chain_id', '=', chainId)
      .where('signer', '=', signer)
      .where('status', '=', 'queued')
      .where('created_at', '<', now)
      .execute();
    const open = await db
      .selectFrom('relay_transactions')
      .select(['id', 'raw_tx'])
      .where('chain_id', '=', chainId)
      .where('signer', '=', signer)
      .where('status', 'in', OPEN)
      .orderBy('nonce')
      .execute();
    for (const row of open) if (row.raw_tx) await enqueueBroadcast(row.id, row.raw_tx as Hex);
    if (open.length > 0) log.info({ transactions: open.length }, 'open relay transactions re-broadcast after start');
  }

  async function submit(request: RelayTxRequest): Promise<RelayTransaction> {
    if (stopped) throw new AppError('SERVICE_UNAVAILABLE', 'The relayer is shutting down; retry');
    checkGasLimit(request.gasLimit);
    const id = randomUUID();
    const now = clock.now();
    await db
      .insertInto('relay_transactions')
      .values({
        id,
        chain_id: chainId,
        signer,
        nonce: null,
        status: 'queued',
        hashes: '[]',
        to_address: request.to.toLowerCase(),
        data: request.data,
        value: (request.value ?? 0n).toString(),
        brand_id: request.brandId?.toLowerCase() ?? null,
        user_address: request.userAddress?.toLowerCase() ?? null,
        purpose: request.purpose,
        collection_id: request.collectionId === undefined ? null : request.collectionId.toString(),
        created_at: now,
        updated_at: now,
      })
      .execute();
    metrics.relayTransactions.inc({ status: 'queued' });

    let gasLimit = request.gasLimit;
    let fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
    try {
      await ensureElected();
      fees = await cappedFees();
      if (gasLimit === undefined && request.gasEstimate !== undefined) {
        gasLimit = minOf((request.gasEstimate * GAS_MARGIN_PERCENT) / 100n, maxGasLimit);
      } else if (gasLimit === undefined) {
        const simulation = await simulate(request);
        if (!simulation.ok) {
          await markFailed(id, simulation.reason);
          return toTransaction((await load(id))!, account.address);
        }
        gasLimit = minOf((simulation.gasEstimate * GAS_MARGIN_PERCENT) / 100n, maxGasLimit);
      }
    } catch (error) {
      await markFailed(id, errorReason(error));
      throw error;
    }

    const signed = await sender
      .withSigningLock(async () => {
        const nonce = await sender.nextNonce();
        const { raw, hash } = await sender.sign({
          nonce,
          to: request.to,
          data: request.data,
          value: request.value ?? 0n,
          gas: gasLimit!,
          ...fees,
        });
        const at = clock.now();
        await db
          .updateTable('relay_transactions')
          .set({
            status: 'submitted',
            nonce,
            current_hash: hash,
            hashes: JSON.stringify([hash]),
            raw_tx: raw,
            max_fee_per_gas: fees.maxFeePerGas.toString(),
            max_priority_fee_per_gas: fees.maxPriorityFeePerGas.toString(),
            gas_limit: gasLimit!.toString(),
            submitted_at: at,
            updated_at: at,
          })
          .where('id', '=', id)
          .execute();
        sender.nonceUsed(nonce);
        return { raw, hash, nonce };
      })
      .catch(async (error: unknown) => {
        // Nothing signed was committed; the nonce is re-read from chain and database next time.
        sender.forgetNonce();
        await markFailed(id, errorReason(error));
        throw error;
      });
    log.debug({ id, nonce: Number(signed.nonce), hash: signed.hash, purpose: request.purpose }, 'relay signed');
    await enqueueBroadcast(id, signed.raw);
    return toTransaction((await load(id))!, account.address);
  }

  /** A tracking pass, at most one per PTS_RECEIPT_POLL_MS however many callers wait. */
  function trackThrottled(): Promise<void> {
    if (tracking) return tracking;
    if (performance.now() - lastTrackAt < config.PTS_RECEIPT_POLL_MS) return Promise.resolve();
    return track();
  }

  async function waitFor(id: string, timeoutMs: number): Promise<RelayTransaction> {
    if (!UUID.test(id)) throw new AppError('NOT_FOUND', `No relay transaction ${id}`);
    const deadline = performance.now() + timeoutMs;
    // The row is read again only when this process settled it (told through `notify`) or, every tenth poll,
    // in case another process did; waiting costs no database round trip per poll.
    let dirty = true;
    let polls = 0;
    let wake: (() => void) | undefined;
    const listener = (changedId?: string) => {
      if (changedId !== undefined && changedId !== id) return;
      dirty = true;
      wake?.();
    };
    listeners.add(listener);
    try {
      let row: Row | undefined;
      for (;;) {
        if (dirty || !row || performance.now() >= deadline) {
          dirty = false;
          row = await load(id);
          if (!row) throw new AppError('NOT_FOUND', `No relay transaction ${id}`);
        }
        if (FINAL.includes(row.status) || row.status === 'queued' || performance.now() >= deadline || stopped) {
          return toTransaction(row, account.address);
        }
        const remaining = deadline - performance.now();
        await new Promise<void>((resolve) => {
          const finish = () => {
            clearTimeout(timer);
            wake = undefined;
            resolve();
          };
          const timer = setTimeout(finish, Math.min(config.PTS_RECEIPT_POLL_MS, Math.max(remaining, 0)));
          wake = finish;
        });
        if (dirty) continue;
        await trackThrottled().catch((error: unknown) =>
          log.warn({ error: errorReason(error) }, 'receipt tracking failed'),
        );
        if (++polls % 10 === 0) dirty = true;
      }
    } finally {
      listeners.delete(listener);
    }
  }

  return {
    address: account.address,
    simulate,
    submit,
    waitFor,
    async get(id) {
      if (!UUID.test(id)) return undefined;
      const row = await load(id);
      return row ? toTransaction(row, account.address) : undefined;
    },
    gasByBrand: (brandId) => readGasByBrand(db, chainId, brandId),
    start() {
      if (pollTimer || stopped) return;
      recover().catch((error: unknown) => log.warn({ error: errorReason(error) }, 'relay recovery failed'));
      pollTimer = setInterval(() => {
        track().catch((error: unknown) => log.warn({ error: errorReason(error) }, 'receipt tracking failed'));
      }, config.PTS_RECEIPT_POLL_MS);
      pollTimer.unref();
    },
    async stop() {
      stopped = true;
      if (pollTimer) clearInterval(pollTimer);
      pollTimer = undefined;
      notify();
      await tracking?.catch(() => undefined);
      await sender.drained();
      await lock?.release();
    },
  };
}

/**
 * Gas the relayer spent per brand on `chainId` (transactions with a receipt, reverted ones included: their gas
 * was paid too), one brand's when `brandId` is given, of transactions relayed (created) in `window` when given.
 * Cost = Σ gasUsed × effectiveGasPrice, in wei.
 */
export async function readGasByBrand(
  db: Database,
  chainId: number,
  brandId?: string,
  window?: { from: Date; to: Date },
): Promise<BrandGasUsage[]> {
  let query = db
    .selectFrom('relay_transactions')
    .select((eb) => [
      'brand_id',
      eb.fn.countAll<string>().as('transactions'),
      eb.fn.coalesce(eb.fn.sum<string>('gas_used'), eb.val('0')).as('gas_used'),
      eb.fn.coalesce(eb.fn.sum<string>(eb('gas_used', '*', eb.ref('effective_gas_price'))), eb.val('0')).as('cost_wei'),
    ])
    .where('chain_id', '=', chainId)
    .where('gas_used', 'is not', null)
    .groupBy('brand_id')
    .orderBy('brand_id');
  if (brandId !== undefined) query = query.where('brand_id', '=', brandId.toLowerCase());
  if (window !== undefined) query = query.where('created_at', '>=', window.from).where('created_at', '<', window.to);
  const rows = await query.execute();
  return rows.map(
    (row): BrandGasUsage => ({
      brandId: row.brand_id,
      transactions: Number(row.transactions),
      gasUsed: BigInt(String(row.gas_used).split('.')[0]!),
      costWei: BigInt(String(row.cost_wei).split('.')[0]!),
    }),
  );
}

/**
 * The relayer of an instance that has no relayer key (PTS_CHAIN=rpc without PTS_RELAYER_PRIVATE_KEY, on an
 * instance without the `relayer` role): every call answers 503 saying why, so nothing signs by accident.
 */
export function createUnavailableRelayer(reason: string): RelayerSender {
  const refuse = async (): Promise<never> => {
    throw new AppError('SERVICE_UNAVAILABLE', `The relayer is not available: ${reason}`);
  };
  return {
    address: '0x0000000000000000000000000000000000000000',
    simulate: refuse,
    submit: refuse,
    waitFor: refuse,
    get: refuse,
    gasByBrand: refuse,
    start() {},
    async stop() {},
  };
}
