import type { Clock } from '@pts/shared';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import {
  type Address,
  encodeFunctionData,
  type Hex,
  isAddress,
  keccak256,
  type LocalAccount,
  parseTransaction,
  type TransactionReceipt,
} from 'viem';
import type { Config, MintFinality } from '../config.ts';
import type { Database, DatabaseKind } from '../db/database.ts';
import type { Metrics } from '../observability/metrics.ts';
import { rewardTokenAbi } from './artifacts/index.ts';
import {
  type ChainTxRow,
  confirmedTxsAt,
  confirmTxs,
  countOpenTxs,
  failTx,
  forgetMinedTxs,
  insertSignedTx,
  listOpenTxs,
  markTxsSubmitted,
  maxConfirmedNonce,
  recordMinedTxs,
  recordReplacement,
  recordTxError,
  reopenConfirmedTx,
} from './chain-txs.repository.ts';
import type { ChainPublicClient } from './deploy.ts';
import { IMMEDIATE_FINALITY, readFinalBlock } from './finality.ts';
import type { InlineMintSigner, Minter, MintSubmission, ProcessPendingResult, QueueStatus } from './minter.types.ts';
import { splitDroppedBatches } from './supply-witness.ts';
import {
  createTxSender,
  type Fees,
  maxOf,
  replacementFees,
  type SendOutcome,
  type SendResult,
  shortError,
} from './tx-sender.ts';

export type MinterConfig = Pick<
  Config,
  | 'PTS_MINT_BATCH_MAX'
  | 'PTS_MINT_BATCH_WAIT_MS'
  | 'PTS_MINT_STUCK_SECONDS'
  | 'PTS_MINT_MAX_ATTEMPTS'
  | 'PTS_RECEIPT_POLL_MS'
> &
  Partial<Pick<Config, 'PTS_MINT_WAIT_MS'>>;

export interface MinterDeps {
  db: Database;
  chainId: number;
  publicClient: ChainPublicClient;
  /** The minter key. This process must be the only one signing with it (see acquireSignerLock). */
  account: LocalAccount;
  tokenAddress: Address;
  config: MinterConfig;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Broadcasts a signed transaction; injectable so tests can fail it the way a crash or outage would. */
  sendRawTransaction?: (serializedTransaction: Hex) => Promise<Hex>;
  /**
   * Runs inside the transaction that marks rewards confirmed, so whatever it writes (the brand's
   * `reward.distributed` notifications) commits exactly when the confirmation does.
   */
  onMintsConfirmed?: (trx: Database, mints: ConfirmedMint[], confirmation: MintConfirmation) => Promise<void>;
  /** When a mint counts as final (default: at its first receipt, for a local anvil). */
  finality?: MintFinality;
  /**
   * Called when the tracker sees the chain go back (head lower than before, a receipt gone, the ledger's
   * confirmed nonce above the chain's): the reconciler then re-checks every confirmed mint at once.
   */
  onRollback?: (reason: string) => void;
  /** Transactions waiting with the signer's nonce unmoved this long: `wedged` (PTS_CHAIN_WEDGED_SECONDS). */
  wedgedAfterSeconds?: number;
}

/** A reward row whose mint transaction was mined. */
export interface ConfirmedMint {
  id: string;
  eventId: string | null;
  brandId: string;
  walletAddress: string;
  amount: bigint;
  /** The mined `mintBatch` that carried it. */
  transactionHash: Hex;
  blockNumber: bigint;
  /**
   * `receipt`: `transactionHash` has a receipt at `blockNumber`. `supply`: the batch's nonce was used and the
   * token supply holds its mint, but no receipt exists under any hash the minter recorded (a chain restored
   * from a state dump taken mid-block): `transactionHash` is the one it sent, with no receipt to show.
   */
  confirmedBy: 'receipt' | 'supply';
}

/** About the confirmation itself (one may cover several mined transactions). */
export interface MintConfirmation {
  /** When it was recorded. */
  at: Date;
}

/** Gas for `mintBatch`: measured ~25k per new holder plus ~45k fixed; the margin covers calldata and warm-up. */
export function mintBatchGasLimit(recipients: number): bigint {
  return 60_000n + 35_000n * BigInt(recipients);
}

/** How long sent transactions gather before one UPDATE marks them all `submitted`. */
const MARK_GATHER_MS = 50;
/** Mined transactions confirmed in one database transaction (confirmMined). */
const CONFIRM_GROUP = 25;
/** Bounds one processPending pass so a flood of pending rows cannot keep the reward processor busy forever. */
const MAX_BATCHES_PER_PASS = 50;
const PURPOSE = 'mintBatch';
/** Pending rows younger than this belong to a request that is about to flush them itself. */
const SWEEP_AFTER_MS = 2_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Nonces burned per tracking pass when closing a gap; a larger gap closes over several passes. */
const MAX_GAP_FILL = 100n;

interface SignedBatch {
  chainTxId: bigint;
  nonce: bigint;
  hash: Hex;
  raw: Hex;
  mintIds: string[];
}

type Waiter = (submission: MintSubmission | Error) => void;

/**
 * The reward minter: an outbox of `reward_mints` rows turned into `mintBatch` transactions by one batcher
 * per signer (see docs/chain.md for the states and the crash-safety argument).
 */
export function createMinter(deps: MinterDeps): Minter {
  const { db, chainId, publicClient, account, tokenAddress, config, clock, logger, metrics } = deps;
  const signer = account.address.toLowerCase();
  const log = logger.child({ component: 'minter', signer: account.address });
  const sender = createTxSender({
    db,
    publicClient,
    account,
    chainId,
    table: 'chain_txs',
    sendRawTransaction: deps.sendRawTransaction,
  });
  const batchMax = config.PTS_MINT_BATCH_MAX;
  const defaultWaitMs = config.PTS_MINT_WAIT_MS ?? 10_000;

  const waiting = new Map<string, Waiter[]>();
  let flushLoop: Promise<void> | undefined;
  let wakeGather: (() => void) | undefined;
  let stopped = false;
  let pollTimer: NodeJS.Timeout | undefined;

  const broadcasting = new Set<bigint>();
  let tracking: Promise<TrackResult> | undefined;
  const finality = deps.finality ?? IMMEDIATE_FINALITY;
  let tagWarned = false;
  let wedgedLogged = false;
  /** The last head a tracking pass saw. */
  let lastHead: bigint | undefined;
  /** The signer's nonce on chain at the last pass, and when (clock ms) it last moved: our last mined tx. */
  let lastNonce: bigint | undefined;
  let lastMinedAt: number | undefined;
  /** Since when (clock ms) transactions have waited with no mine of ours: the wedge timer. */
  let progressAt: number | undefined;
  /** Open transactions at the last pass. */
  let openCount = 0;
  const wedgedMs = (deps.wedgedAfterSeconds ?? 60) * 1000;

  /** Signs one `mintBatch` for these rows with `nonce` and records it (`signed`) in `trx`. No RPC here. */
  async function signInto(
    trx: Database,
    rows: { wallet_address: string; amount: bigint | string | number }[],
    nonce: bigint,
    fees: Fees,
    now: Date,
  ): Promise<{ chainTxId: bigint; hash: Hex; raw: Hex }> {
    const data = encodeFunctionData({
      abi: rewardTokenAbi,
      functionName: 'mintBatch',
      args: [rows.map((row) => row.wallet_address as Address), rows.map((row) => BigInt(row.amount))],
    });
    const gas = mintBatchGasLimit(rows.length);
    const { raw, hash } = await sender.sign({ nonce, to: tokenAddress, data, gas, value: 0n, ...fees });
    const chainTxId = await insertSignedTx(trx, {
      chainId,
      signer,
      nonce,
      purpose: PURPOSE,
      hash,
      raw,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      gasLimit: gas,
      at: now,
    });
    return { chainTxId, hash, raw };
  }

  /**
   * Claims pending rows (only `onlyIds` when given; with `fresh`, only never-attempted rows older than
   * `fresh.before`, so a sweep never races a request's own flush nor retries a reverted batch early) and
   * signs one `mintBatch` for them, recording both in one DB transaction. No RPC happens inside it: nonce and
   * fees are read before, the broadcast happens after the commit.
   */
  function signAndRecord(onlyIds?: string[], fresh?: { before: Date }): Promise<SignedBatch | null> {
    return sender.withSigningLock(async () => {
      if (onlyIds && onlyIds.length === 0) return null;
      const nonce = await sender.nextNonce();
      const fees = await sender.fees();
      const now = clock.now();
      let batch: SignedBatch | null;
      try {
        batch = await db.transaction().execute(async (trx) => {
          let query = trx
            .selectFrom('reward_mints')
            .select(['id', 'wallet_address', 'amount'])
            .where('status', '=', 'pending');
          if (onlyIds) query = query.where('id', 'in', onlyIds);
          if (fresh) query = query.where('attempts', '=', 0).where('created_at', '<', fresh.before);
          const rows = await query
            .orderBy('created_at')
            .orderBy('id')
            .limit(batchMax)
            .forUpdate()
            .skipLocked()
            .execute();
          // One bad address would make every batch it joins fail to encode; it fails alone instead.
          const invalid = rows.filter((row) => !isAddress(row.wallet_address, { strict: false }));
          if (invalid.length > 0) {
            await trx
              .updateTable('reward_mints')
              .set({ status: 'failed', last_error: 'invalid wallet address', updated_at: now })
              .where(
                'id',
                'in',
                invalid.map((row) => row.id),
              )
              .execute();
            log.error(
              { mintIds: invalid.map((row) => row.id) },
              'reward rows with invalid wallet addresses marked failed',
            );
          }
          const valid = rows.filter((row) => isAddress(row.wallet_address, { strict: false }));
          if (valid.length === 0) return null;

          const { chainTxId, hash, raw } = await signInto(trx, valid, nonce, fees, now);
          const mintIds = valid.map((row) => row.id);
          await trx
            .updateTable('reward_mints')
            .set({ status: 'submitted', chain_tx_id: chainTxId, last_error: null, updated_at: now })
            .where('id', 'in', mintIds)
            .execute();
          return { chainTxId, nonce, hash, raw, mintIds };
        });
      } catch (error) {
        // Another signer process took this nonce: the unique (chain, signer, nonce) key refused the double use.
        if ((error as { code?: string }).code === '23505') sender.forgetNonce();
        throw error;
      }
      if (batch) {
        sender.nonceUsed(nonce);
        metrics.mintBatchSize.observe(batch.mintIds.length);
        log.debug({ nonce: Number(nonce), hash: batch.hash, rewards: batch.mintIds.length }, 'mintBatch signed');
      }
      return batch;
    });
  }

  interface Mark {
    chainTxId: bigint;
    hash: Hex;
    lastError: string | null;
    done(): void;
    fail(error: unknown): void;
  }
  let marks: Mark[] = [];
  let marking: Promise<void> | undefined;

  /**
   * `signed` → `submitted` once a transaction was sent. Marks made within MARK_GATHER_MS of each other (or
   * while one UPDATE runs) share one statement, so under load this costs one statement per several
   * transactions, and no send waits for it. Until marked, the transaction stays in `broadcasting`, so the
   * tracker does not send it again.
   */
  function markSubmitted(chainTxId: bigint, hash: Hex, lastError: string | null): Promise<void> {
    return new Promise<void>((done, fail) => {
      marks.push({ chainTxId, hash, lastError, done, fail });
      marking ??= new Promise((resolve) => setTimeout(resolve, stopped ? 0 : MARK_GATHER_MS))
        .then(drainMarks)
        .finally(() => {
          marking = undefined;
        });
    });
  }

  async function drainMarks(): Promise<void> {
    while (marks.length > 0) {
      const group = marks;
      marks = [];
      try {
        await markTxsSubmitted(db, group, clock.now());
        for (const m of group) m.done();
      } catch (error) {
        for (const m of group) m.fail(error);
      }
    }
  }

  /** One send of a recorded transaction, classified; never throws. */
  async function sendOnce(hash: Hex, raw: Hex): Promise<SendResult> {
    const result = await sender.send(raw);
    if (result.outcome === 'sent') metrics.mintTransactions.inc({ result: 'sent' });
    if (result.outcome === 'nonce_consumed') {
      // Either this transaction already mined (its receipt settles it) or another sender used the nonce
      // (the tracker sees the nonce passed with no receipt and re-queues); the sender re-reads the nonce.
      log.warn({ hash, error: shortError(result.error) }, 'broadcast: nonce already used');
    }
    if (result.outcome === 'failed') {
      metrics.mintTransactions.inc({ result: 'send_failed' });
      log.warn({ hash, error: shortError(result.error) }, 'broadcast failed; the tracker will resend');
    }
    return result;
  }

  /** Writes what a send found. Failures leave the transaction `signed`: the tracker sends `raw_tx` again. */
  async function recordSend(chainTxId: bigint, hash: Hex, result: SendResult): Promise<void> {
    if (result.outcome === 'failed') {
      await recordTxError(db, chainTxId, shortError(result.error), clock.now());
      return;
    }
    await markSubmitted(chainTxId, hash, result.error === undefined ? null : shortError(result.error));
  }

  /** Sends a recorded transaction and records the outcome. */
  async function broadcast(chainTxId: bigint, hash: Hex, raw: Hex): Promise<SendOutcome> {
    broadcasting.add(chainTxId);
    try {
      const result = await sendOnce(hash, raw);
      await recordSend(chainTxId, hash, result);
      return result.outcome;
    } finally {
      broadcasting.delete(chainTxId);
    }
  }

  /**
   * Broadcasts in signing (nonce) order, overlapping with the signing of the next batch (TxSender.send
   * groups what queues while a send is on its way). Recording the outcome never holds up the next send;
   * `onSent` runs right after this batch's send.
   */
  function enqueueBroadcast(batch: SignedBatch, onSent?: (result: SendResult) => void): Promise<SendOutcome> {
    // Marked from the moment it is queued, so the receipt tracker never re-sends a transaction that is
    // still waiting for its turn (a second send would fail as a used nonce and reset the nonce counter).
    broadcasting.add(batch.chainTxId);
    return sendOnce(batch.hash, batch.raw)
      .then(async (result) => {
        onSent?.(result);
        await recordSend(batch.chainTxId, batch.hash, result);
        return result.outcome;
      })
      .finally(() => broadcasting.delete(batch.chainTxId));
  }

  /**
   * What a request is told after its batch's send: `submitted` with the hash only when the node took the
   * transaction (or already had it); a failed broadcast is `pending` with no hash — the tracker sends it later.
   */
  function submissionAfterSend(batch: SignedBatch, result: SendResult): MintSubmission {
    return result.outcome === 'failed' ? { status: 'pending' } : { status: 'submitted', transactionHash: batch.hash };
  }

  function settle(id: string, result: MintSubmission | Error): void {
    const waiters = waiting.get(id);
    waiting.delete(id);
    for (const waiter of waiters ?? []) waiter(result);
  }

  /** Answers waiters whose rows this batcher did not claim (another pass or process took them). */
  async function settleUnclaimed(ids: string[], waiters: Map<string, Waiter[]>): Promise<void> {
    if (ids.length === 0) return;
    const rows = await db
      .selectFrom('reward_mints')
      .leftJoin('chain_txs', 'chain_txs.id', 'reward_mints.chain_tx_id')
      .select([
        'reward_mints.id',
        'reward_mints.status',
        'reward_mints.last_error',
        'chain_txs.current_hash',
        'chain_txs.status as tx_status',
      ])
      .where('reward_mints.id', 'in', ids)
      .execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const id of ids) {
      const row = byId.get(id);
      let result: MintSubmission | Error;
      if (!row) result = new Error(`no reward_mints row ${id}`);
      else if (row.status === 'failed') result = new Error(`reward ${id} failed: ${row.last_error ?? 'unknown error'}`);
      // A batch still `signed` was never taken by the node: no hash to show yet.
      else if (row.status === 'pending' || !row.current_hash || row.tx_status === 'signed')
        result = { status: 'pending' };
      else result = { status: row.status, transactionHash: row.current_hash as Hex };
      for (const waiter of waiters.get(id) ?? []) waiter(result);
    }
  }

  async function flushGroup(ids: string[]): Promise<void> {
    const groupWaiters = new Map<string, Waiter[]>();
    for (const id of ids) {
      groupWaiters.set(id, waiting.get(id) ?? []);
      waiting.delete(id);
    }
    try {
      const batch = await signAndRecord(ids);
      const claimed = new Set(batch?.mintIds ?? []);
      if (batch) {
        void enqueueBroadcast(batch, (result) => {
          const answer = submissionAfterSend(batch, result);
          for (const id of batch.mintIds) {
            for (const waiter of groupWaiters.get(id) ?? []) waiter(answer);
          }
        }).catch((error: unknown) => log.warn({ error: shortError(error) }, 'recording a broadcast failed'));
      }
      await settleUnclaimed(
        ids.filter((id) => !claimed.has(id)),
        groupWaiters,
      );
    } catch (error) {
      // Nothing was committed: the rows are still `pending` and the reward processor re-drives them.
      log.error({ error: shortError(error), rewards: ids.length }, 'mint batch failed before commit');
      for (const waiters of groupWaiters.values()) for (const waiter of waiters) waiter({ status: 'pending' });
    }
  }

  function gather(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeGather = undefined;
        resolve();
      }
      wakeGather = done;
    });
  }

  /**
   * Group commit: the first reward waits at most PTS_MINT_BATCH_WAIT_MS for company; rewards arriving while
   * a group is being signed and committed form the next group, which goes as soon as that one is done.
   */
  function scheduleFlush(): void {
    if (waiting.size >= batchMax) wakeGather?.();
    if (flushLoop || stopped) return;
    flushLoop = (async () => {
      if (waiting.size < batchMax) {
        if (config.PTS_MINT_BATCH_WAIT_MS > 0) await gather(config.PTS_MINT_BATCH_WAIT_MS);
        else await new Promise((resolve) => setImmediate(resolve));
      }
      while (waiting.size > 0 && !stopped) {
        await flushGroup([...waiting.keys()].slice(0, batchMax));
      }
    })().finally(() => {
      flushLoop = undefined;
      if (waiting.size > 0 && !stopped) scheduleFlush();
    });
  }

  interface TrackResult {
    confirmedTransactions: number;
    requeued: number;
    replaced: number;
  }

  /**
   * Records mined transactions as confirmed, with their rewards and whatever `onMintsConfirmed` writes, in
   * one database transaction per group of up to CONFIRM_GROUP: under load the tracker finds several mined
   * batches per pass, and their bookkeeping (webhooks, leaderboards, achievements) then costs one set of
   * statements instead of one per batch. Returns how many transactions this call confirmed.
   */
  async function confirmMined(
    mined: {
      tx: ChainTxRow;
      receipt: Pick<TransactionReceipt, 'transactionHash' | 'blockNumber' | 'gasUsed'>;
      /** `supply`: no receipt exists; the token supply showed the batch landed (supply-witness.ts). */
      by?: 'receipt' | 'supply';
    }[],
  ): Promise<number> {
    let confirmedCount = 0;
    for (let start = 0; start < mined.length; start += CONFIRM_GROUP) {
      const group = mined.slice(start, start + CONFIRM_GROUP);
      confirmedCount += await db.transaction().execute(async (trx) => {
        const at = clock.now();
        const updated = await confirmTxs(
          trx,
          group.map(({ tx, receipt, by }) => ({
            chainTxId: BigInt(tx.id),
            hash: receipt.transactionHash,
            blockNumber: receipt.blockNumber,
            gasUsed: receipt.gasUsed,
            by,
          })),
          at,
        );
        if (updated.length === 0) return 0;
        const receiptOf = new Map(group.map(({ tx, receipt }) => [String(tx.id), receipt]));
        const confirmedByOf = new Map(group.map(({ tx, by }) => [String(tx.id), by ?? 'receipt']));
        const confirmed = await trx
          .updateTable('reward_mints')
          .set({ status: 'confirmed', last_error: null, updated_at: at })
          .where('chain_tx_id', 'in', updated)
          .where('status', '=', 'submitted')
          .returning(['id', 'event_id', 'brand_id', 'wallet_address', 'amount', 'chain_tx_id', 'reconciled_at'])
          .execute();
        // A reward the reconciler put back (its first confirmation was lost on chain) had its notice and
        // leaderboard points at that first confirmation: it is only minted again here.
        const firstTime = confirmed.filter((row) => row.reconciled_at === null);
        if (deps.onMintsConfirmed && firstTime.length > 0) {
          await deps.onMintsConfirmed(
            trx,
            firstTime.map((row) => {
              const receipt = receiptOf.get(String(row.chain_tx_id))!;
              return {
                id: row.id,
                eventId: row.event_id,
                brandId: row.brand_id,
                walletAddress: row.wallet_address,
                amount: BigInt(row.amount),
                transactionHash: receipt.transactionHash,
                blockNumber: receipt.blockNumber,
                confirmedBy: confirmedByOf.get(String(row.chain_tx_id)) ?? 'receipt',
              };
            }),
            { at },
          );
        }
        return updated.length;
      });
    }
    return confirmedCount;
  }

  /** Marks the transaction failed and puts its rows back to `pending` (or `failed` after the last attempt). */
  async function requeue(tx: ChainTxRow, reason: string, blockNumber: bigint | null): Promise<number> {
    return db.transaction().execute(async (trx) => {
      if (!(await failTx(trx, BigInt(tx.id), reason, blockNumber, clock.now()))) return 0;
      const rows = await trx
        .updateTable('reward_mints')
        .set({
          attempts: sql<number>`attempts + 1`,
          status: sql<
            'pending' | 'failed'
          >`CASE WHEN attempts + 1 >= ${config.PTS_MINT_MAX_ATTEMPTS} THEN 'failed' ELSE 'pending' END`,
          last_error: reason,
          updated_at: clock.now(),
        })
        .where('chain_tx_id', '=', tx.id)
        .where('status', '=', 'submitted')
        .returning(['status'])
        .execute();
      return rows.filter((row) => row.status === 'pending').length;
    });
  }

  /** Re-signs the same nonce with +25% fees. The new hash is recorded before it is sent, so whichever mines is found. */
  async function replace(tx: ChainTxRow): Promise<void> {
    const previous = parseTransaction(tx.raw_tx as Hex);
    const fees = replacementFees(
      { maxFeePerGas: BigInt(tx.max_fee_per_gas), maxPriorityFeePerGas: BigInt(tx.max_priority_fee_per_gas) },
      await sender.fees(true),
    );
    if (!fees) return; // with no cap a +25% bump always passes; kept for the type
    const { maxFeePerGas, maxPriorityFeePerGas } = fees;
    const { raw, hash } = await sender.sign({
      nonce: BigInt(tx.nonce),
      to: previous.to ?? tokenAddress,
      data: previous.data ?? '0x',
      gas: previous.gas ?? BigInt(tx.gas_limit),
      value: 0n,
      ...fees,
    });
    const recorded = await recordReplacement(db, tx, { hash, raw, maxFeePerGas, maxPriorityFeePerGas }, clock.now());
    if (!recorded) return;
    metrics.mintTransactions.inc({ result: 'replaced' });
    log.warn(
      { nonce: Number(tx.nonce), previous: tx.current_hash, hash, maxFeePerGas: maxFeePerGas.toString() },
      'replaced stuck mintBatch',
    );
    await broadcast(tx.id, hash, raw);
  }

  /**
   * Nonces below our lowest open transaction that the node has never seen (a chain reset or a state file
   * older than the database) block every later transaction forever. A nonce whose batch the ledger holds
   * `confirmed` is a mint the chain lost: that batch goes back to the outbox and its own signed bytes fill the
   * nonce (they can mine once at most). Only nonces no live batch owns (none, or a failed one whose rewards
   * were re-queued) are burned with 0-value self-transfers, which mint nothing whichever way they land. All go
   * out in nonce order.
   */
  async function fillNonceGap(
    lowest: ChainTxRow | undefined,
    ageOf: (tx: ChainTxRow) => number,
    stuckMs: number,
  ): Promise<boolean> {
    if (!lowest || ageOf(lowest) < stuckMs) return false;
    const pendingNonce = BigInt(
      await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' }),
    );
    if (pendingNonce >= lowest.nonce) return false;
    const fees = await sender.fees(true);
    const last = lowest.nonce - pendingNonce > MAX_GAP_FILL ? pendingNonce + MAX_GAP_FILL : lowest.nonce;
    const nonces: bigint[] = [];
    for (let nonce = pendingNonce; nonce < last; nonce++) nonces.push(nonce);
    const lostConfirmed = new Map(
      (await confirmedTxsAt(db, chainId, signer, nonces)).map((tx) => [BigInt(tx.nonce), tx] as const),
    );
    if (lostConfirmed.size > 0) {
      deps.onRollback?.(`the chain lost ${lostConfirmed.size} confirmed mintBatch transaction(s) below its nonce gap`);
    }
    log.warn(
      { from: Number(pendingNonce), to: Number(lowest.nonce), reopening: lostConfirmed.size },
      'nonce gap below the oldest open mintBatch; re-sending lost batches and burning the other nonces',
    );
    for (const nonce of nonces) {
      const lost = lostConfirmed.get(nonce);
      if (lost) {
        await reopenConfirmedTx(db, lost, `not on chain: nonce ${nonce} is above the chain's`, clock.now());
        const sent = await broadcast(lost.id, keccak256(lost.raw_tx as Hex), lost.raw_tx as Hex);
        if (sent === 'failed') throw new Error(`re-sending the lost mintBatch at nonce ${nonce} failed`);
        continue;
      }
      const { raw } = await sender.sign({
        nonce,
        to: account.address,
        data: '0x',
        value: 0n,
        gas: 21_000n,
        maxFeePerGas: fees.maxFeePerGas,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      });
      const sent = await sender.send(raw);
      if (sent.outcome === 'failed') throw sent.error;
      metrics.mintTransactions.inc({ result: 'gap_filled' });
    }
    return last === lowest.nonce;
  }

  /** Chain facts of one tracking pass, read before the ledger so nothing mined meanwhile looks lost. */
  async function readChainFacts(): Promise<{
    head: bigint;
    finalBlock: bigint;
    latestNonce: bigint;
    finalNonce: bigint;
    wentBack: boolean;
  }> {
    const head = await publicClient.getBlockNumber({ cacheTime: 0 });
    const wentBack = noteHead(head);
    const finalBlock = await readFinalBlock(publicClient, finality, head, (error) => {
      if (tagWarned) return;
      tagWarned = true;
      log.warn(
        { tag: finality.tag, error: shortError(error) },
        'the chain has no such block tag; finality by depth only',
      );
    });
    const [latestNonce, finalNonce] = await Promise.all([
      publicClient.getTransactionCount({ address: account.address, blockNumber: head }).then(BigInt),
      finalBlock < 0n
        ? Promise.resolve(0n)
        : finalBlock === head
          ? undefined
          : publicClient.getTransactionCount({ address: account.address, blockNumber: finalBlock }).then(BigInt),
    ]);
    return { head, finalBlock, latestNonce, finalNonce: finalNonce ?? latestNonce, wentBack };
  }

  /**
   * The head going back is a rollback: whatever the ledger confirmed above it must be checked again, and
   * open transactions the node may have dropped with the lost blocks are sent again in this pass.
   */
  function noteHead(head: bigint): boolean {
    const now = clock.now().getTime();
    const wentBack = lastHead !== undefined && head < lastHead;
    if (wentBack) deps.onRollback?.(`the chain's head went back from block ${lastHead} to ${head}`);
    lastHead = head;
    progressAt ??= now;
    return wentBack;
  }

  async function trackOnce(): Promise<TrackResult> {
    const result: TrackResult = { confirmedTransactions: 0, requeued: 0, replaced: 0 };
    const { finalBlock, latestNonce: confirmedNonce, finalNonce, wentBack } = await readChainFacts();
    const open = await listOpenTxs(db, chainId, signer);
    openCount = open.length;
    if (lastNonce !== undefined && confirmedNonce !== lastNonce) {
      lastMinedAt = clock.now().getTime();
      progressAt = lastMinedAt;
    }
    lastNonce = confirmedNonce;
    // Idle is not wedged: the timer restarts whenever nothing waits.
    if (open.length === 0) progressAt = clock.now().getTime();
    const nextNonce = sender.peekNonce();
    if (nextNonce !== undefined) metrics.nonceLag.set(Number(maxOf(nextNonce - confirmedNonce, 0n)));
    else metrics.nonceLag.set(open.length);
    const highestConfirmed = await maxConfirmedNonce(db, chainId, signer);
    if (highestConfirmed !== undefined && highestConfirmed >= confirmedNonce) {
      deps.onRollback?.(`the ledger confirmed nonce ${highestConfirmed}; the chain's nonce is ${confirmedNonce}`);
    }
    if (open.length === 0) return result;

    const receipts = await Promise.all(
      open.map(async (tx) =>
        (await Promise.all(tx.hashes.map((hash) => sender.receipt(hash as Hex)))).find((r) => r !== null),
      ),
    );
    // A receipt seen in an earlier pass that the chain no longer has: its block was rolled back. The batch
    // was never final (its rewards are still `submitted`); its signed bytes go out again.
    const vanished = open.filter((tx, index) => tx.block_number !== null && !receipts[index]);
    if (vanished.length > 0) {
      const now = clock.now();
      await forgetMinedTxs(
        db,
        vanished.map((tx) => BigInt(tx.id)),
        'its block was rolled back',
        now,
      );
      for (const tx of vanished) Object.assign(tx, { status: 'signed', block_number: null, submitted_at: now });
      deps.onRollback?.(`${vanished.length} mined mintBatch receipt(s) disappeared`);
    }
    const stuckMs = config.PTS_MINT_STUCK_SECONDS * 1000;
    const ageOf = (tx: ChainTxRow) => clock.now().getTime() - new Date(tx.submitted_at).getTime();
    const gapFilled = await fillNonceGap(
      open.find((_, index) => !receipts[index]),
      ageOf,
      stuckMs,
    );
    // Receipts are read after the head: one may sit in a block mined since. By depth alone that block's
    // successors count from it, so the final block moves up with the newest receipt (not past a tag's block).
    const newestReceipt = receipts.reduce((max, r) => (r && r.blockNumber > max ? r.blockNumber : max), -1n);
    const byDepth = newestReceipt - BigInt(finality.depth);
    const finalAt = finality.tag === 'latest' && byDepth > finalBlock ? byDepth : finalBlock;
    const isFinal = (receipt: TransactionReceipt) => receipt.blockNumber <= finalAt;
    const mined = open.flatMap((tx, index) => {
      const receipt = receipts[index];
      return receipt?.status === 'success' && isFinal(receipt) ? [{ tx, receipt }] : [];
    });
    await recordMinedTxs(
      db,
      open.flatMap((tx, index) => {
        const receipt = receipts[index];
        return receipt && !isFinal(receipt) ? [{ chainTxId: BigInt(tx.id), blockNumber: receipt.blockNumber }] : [];
      }),
      clock.now(),
    );
    const confirmedNow = await confirmMined(mined);
    result.confirmedTransactions += confirmedNow;
    if (confirmedNow > 0) metrics.mintTransactions.inc({ result: 'confirmed' }, confirmedNow);
    const dropped: ChainTxRow[] = [];
    for (const [index, tx] of open.entries()) {
      const receipt = receipts[index];
      const age = ageOf(tx);
      if (receipt) {
        // Mined: confirmed above once final; until then nothing to send, and a revert is only acted on when final.
        if (receipt.status === 'success' || !isFinal(receipt)) continue;
        const requeued = await requeue(tx, `transaction ${receipt.transactionHash} reverted`, receipt.blockNumber);
        result.requeued += requeued;
        result.confirmedTransactions++;
        metrics.mintTransactions.inc({ result: 'reverted' });
        log.warn({ hash: receipt.transactionHash, requeued }, 'mintBatch reverted; rewards re-queued');
      } else if (tx.nonce < finalNonce && age >= stuckMs) {
        // The nonce was used (in a final block) by a transaction none of our recorded hashes match: settled below.
        dropped.push(tx);
      } else if (tx.nonce < confirmedNonce) {
        // Its nonce is used in a block that is not final yet: wait, a rollback could still bring ours back.
      } else if (age >= stuckMs && !gapFilled) {
        await replace(tx);
        result.replaced++;
      } else if ((gapFilled || wentBack || tx.status === 'signed') && !broadcasting.has(tx.id)) {
        // A reset chain never had these (now that the gap is closed they can mine as signed); after the head
        // went back the node may have lost them with its blocks; `signed` ones were never accepted by the
        // node, or their block was rolled back.
        await broadcast(tx.id, tx.current_hash as Hex, tx.raw_tx as Hex);
      }
    }
    if (dropped.length > 0) await settleDropped(dropped, finalBlock, result);
    return result;
  }

  /**
   * Batches whose nonce was used with none of their hashes mined: those whose tokens the supply holds mined
   * without a receipt we can find (supply-witness.ts) and are confirmed; the others can never mine now, and
   * their rewards are re-queued.
   */
  async function settleDropped(dropped: ChainTxRow[], finalBlock: bigint, result: TrackResult): Promise<void> {
    const split = await splitDroppedBatches(
      { db, chainId, publicClient, tokenAddress, signer, receipt: (hash) => sender.receipt(hash) },
      dropped,
      finalBlock,
    );
    if (split.landed.length > 0) {
      const confirmed = await confirmMined(
        split.landed.map((tx) => ({
          tx,
          receipt: { transactionHash: tx.current_hash as Hex, blockNumber: split.blockNumber, gasUsed: 0n },
          by: 'supply' as const,
        })),
      );
      result.confirmedTransactions += confirmed;
      metrics.mintTransactions.inc({ result: 'landed_without_receipt' }, split.landed.length);
      log.warn(
        {
          nonces: split.landed.map((tx) => Number(tx.nonce)),
          blockNumber: split.blockNumber.toString(),
          surplus: split.surplus.toString(),
        },
        'mintBatch nonce used with no receipt for its hashes, but the token supply holds its mint: confirmed, not minted again',
      );
    }
    for (const tx of split.lost) {
      const requeued = await requeue(tx, `dropped: nonce ${tx.nonce} was used by another transaction`, null);
      result.requeued += requeued;
      metrics.mintTransactions.inc({ result: 'dropped' });
      log.warn({ nonce: Number(tx.nonce), requeued }, 'mintBatch dropped; rewards re-queued');
    }
  }

  /** One tracking pass at a time: two concurrent passes could both replace the same transaction. */
  function track(): Promise<TrackResult> {
    tracking ??= trackOnce().finally(() => {
      tracking = undefined;
    });
    return tracking;
  }

  let sweeping: Promise<void> | undefined;
  /**
   * Mints rows other processes committed (replicas that do not hold the signer lock hand their rewards over
   * this way), a few seconds after they were written.
   */
  function sweepFresh(): Promise<void> {
    sweeping ??= (async () => {
      const before = new Date(clock.now().getTime() - SWEEP_AFTER_MS);
      for (let pass = 0; pass < MAX_BATCHES_PER_PASS && !stopped; pass++) {
        const batch = await signAndRecord(undefined, { before });
        if (!batch) break;
        await enqueueBroadcast(batch, (sent) => {
          for (const id of batch.mintIds) settle(id, submissionAfterSend(batch, sent));
        });
      }
    })().finally(() => {
      sweeping = undefined;
    });
    return sweeping;
  }

  async function countByStatus(): Promise<Pick<QueueStatus, 'pending' | 'submitted' | 'confirmed' | 'failed'>> {
    const rows = await db
      .selectFrom('reward_mints')
      .select(['status', (eb) => eb.fn.countAll().as('count')])
      .groupBy('status')
      .execute();
    const counts = { pending: 0, submitted: 0, confirmed: 0, failed: 0 };
    for (const row of rows) counts[row.status] = Number(row.count);
    for (const [status, count] of Object.entries(counts)) metrics.rewardsByStatus.set({ status }, count);
    return counts;
  }

  return {
    submit(mintId, options) {
      // reward_mints.id is a uuid: a malformed id would fail the whole group's query, not just its own.
      if (!UUID.test(mintId)) return Promise.reject(new Error(`not a reward id: ${mintId}`));
      if (stopped) return Promise.resolve({ status: 'pending' });
      const waitMs = options?.waitMs ?? defaultWaitMs;
      return new Promise<MintSubmission>((resolve, reject) => {
        const timer = setTimeout(() => resolve({ status: 'pending' }), waitMs);
        const waiters = waiting.get(mintId) ?? [];
        waiters.push((result) => {
          clearTimeout(timer);
          if (result instanceof Error) reject(result);
          else resolve(result);
        });
        waiting.set(mintId, waiters);
        scheduleFlush();
      });
    },

    mintInline(work, options) {
      const waitMs = options?.waitMs ?? defaultWaitMs;
      return sender.withSigningLock(async () => {
        if (stopped) return { value: await work(undefined), sent: undefined };
        let nonce: bigint;
        let fees: Fees;
        try {
          nonce = await sender.nextNonce();
          fees = await sender.fees();
        } catch (error) {
          // The chain is unreachable: the rows go in `pending` and the minter's own path sends them later.
          log.warn(
            { error: shortError(error) },
            'cannot sign inline (nonce or fees unavailable); rewards stay pending',
          );
          return { value: await work(undefined), sent: undefined };
        }
        const signed: { batch?: SignedBatch } = {};
        const signer: InlineMintSigner = {
          async sign(trx, rows) {
            if (signed.batch) throw new Error('mintInline signs one batch per transaction');
            if (rows.length === 0 || rows.length > batchMax) return undefined;
            if (rows.some((row) => !isAddress(row.walletAddress, { strict: false }))) return undefined;
            const recorded = await signInto(
              trx,
              rows.map((row) => ({ wallet_address: row.walletAddress, amount: row.amount })),
              nonce,
              fees,
              clock.now(),
            );
            signed.batch = { ...recorded, nonce, mintIds: rows.map((row) => row.id) };
            return { chainTxId: recorded.chainTxId, transactionHash: recorded.hash };
          },
        };
        let value: Awaited<ReturnType<typeof work>>;
        try {
          value = await work(signer);
        } catch (error) {
          // Rolled back: the nonce was never used. A unique-key refusal means another signer took it.
          if ((error as { code?: string }).code === '23505') sender.forgetNonce();
          throw error;
        }
        const batch = signed.batch;
        if (!batch) return { value, sent: undefined };
        sender.nonceUsed(nonce);
        metrics.mintBatchSize.observe(batch.mintIds.length);
        log.debug({ nonce: Number(nonce), hash: batch.hash, rewards: batch.mintIds.length }, 'mintBatch signed inline');
        const sent = new Promise<MintSubmission>((resolve) => {
          const timer = setTimeout(() => resolve({ status: 'pending' }), waitMs);
          let answered = false;
          const answer = (submission: MintSubmission) => {
            if (answered) return;
            answered = true;
            clearTimeout(timer);
            resolve(submission);
          };
          // Queued while the signing lock is held, so sends stay in nonce order.
          enqueueBroadcast(batch, (result) => answer(submissionAfterSend(batch, result))).catch((error: unknown) => {
            log.warn({ error: shortError(error) }, 'recording a broadcast failed');
            answer({ status: 'pending' });
          });
        });
        return { value, sent };
      });
    },

    async processPending() {
      const tracked = await track();
      const result: ProcessPendingResult = {
        claimed: 0,
        batches: 0,
        transactionHashes: [],
        confirmedTransactions: tracked.confirmedTransactions,
        requeued: tracked.requeued,
        replaced: tracked.replaced,
      };
      for (let pass = 0; pass < MAX_BATCHES_PER_PASS && !stopped; pass++) {
        const batch = await signAndRecord();
        if (!batch) break;
        result.claimed += batch.mintIds.length;
        result.batches++;
        result.transactionHashes.push(batch.hash);
        await enqueueBroadcast(batch, (sent) => {
          for (const id of batch.mintIds) settle(id, submissionAfterSend(batch, sent));
        });
      }
      await countByStatus();
      return result;
    },

    mintingState() {
      const now = clock.now().getTime();
      const wedged = openCount > 0 && progressAt !== undefined && now - progressAt >= wedgedMs;
      if (wedged && !wedgedLogged)
        log.error({ waiting: openCount }, 'minting is wedged: transactions wait and none mines');
      wedgedLogged = wedged;
      return {
        status: wedged ? 'wedged' : 'ok',
        signer: true,
        waitingTransactions: openCount,
        lastMinedAt: lastMinedAt === undefined ? null : new Date(lastMinedAt).toISOString(),
      };
    },

    async queueStatus() {
      const [counts, oldest, open, confirmedNonce, next] = await Promise.all([
        countByStatus(),
        db
          .selectFrom('reward_mints')
          .select((eb) => eb.fn.min('created_at').as('oldest'))
          .where('status', '=', 'pending')
          .executeTakeFirst(),
        countOpenTxs(db, chainId, signer),
        publicClient.getTransactionCount({ address: account.address, blockTag: 'latest' }).catch(() => null),
        sender.peekNonce() === undefined ? sender.readNonce().catch(() => null) : Promise.resolve(sender.peekNonce()!),
      ]);
      if (confirmedNonce !== null && next !== null) metrics.nonceLag.set(Math.max(Number(next) - confirmedNonce, 0));
      return {
        ...counts,
        oldestPendingAt: oldest?.oldest ? new Date(oldest.oldest).toISOString() : null,
        openTransactions: open,
        signer: account.address,
        nextNonce: next === null ? null : Number(next),
        confirmedNonce,
      };
    },

    start() {
      if (pollTimer || stopped) return;
      pollTimer = setInterval(() => {
        track().catch((error: unknown) => log.warn({ error: shortError(error) }, 'receipt tracking failed'));
        sweepFresh().catch((error: unknown) => log.warn({ error: shortError(error) }, 'pending sweep failed'));
      }, config.PTS_RECEIPT_POLL_MS);
      pollTimer.unref();
    },

    async stop() {
      stopped = true;
      if (pollTimer) clearInterval(pollTimer);
      pollTimer = undefined;
      wakeGather?.();
      await flushLoop;
      await tracking?.catch(() => undefined);
      await sweeping?.catch(() => undefined);
      await sender.drained();
      await marking?.catch(() => undefined);
      // Rows still waiting are committed `pending`; the next start re-drives them.
      for (const id of [...waiting.keys()]) settle(id, { status: 'pending' });
    },
  };
}

export interface SignerLock {
  release(): Promise<void>;
}

/**
 * Elects the one process allowed to sign with `signer` on `chainId`: on PostgreSQL a session advisory lock
 * held on a dedicated pooled connection until `release()`; resolves `null` when another process holds it.
 * PGlite is embedded in a single process, so there it always succeeds. The unique (chain_id, signer, nonce)
 * key on chain_txs stays as the second line of defence if the lock's connection is lost.
 */
export function acquireSignerLock(options: {
  db: Database;
  kind: DatabaseKind;
  chainId: number;
  signer: Address;
}): Promise<SignerLock | null> {
  if (options.kind === 'pglite') return Promise.resolve({ release: async () => {} });
  const key = `pts-minter:${options.chainId}:${options.signer.toLowerCase()}`;
  return new Promise((resolve, reject) => {
    let releaseConnection: () => void = () => {};
    const released = new Promise<void>((done) => {
      releaseConnection = done;
    });
    const session = options.db.connection().execute(async (connection) => {
      const { rows } = await sql<{
        locked: boolean;
      }>`SELECT pg_try_advisory_lock(hashtextextended(${key}, 0)) AS locked`.execute(connection);
      if (!rows[0]?.locked) {
        resolve(null);
        return;
      }
      resolve({
        release: async () => {
          releaseConnection();
          await session;
        },
      });
      await released;
      await sql`SELECT pg_advisory_unlock(hashtextextended(${key}, 0))`.execute(connection);
    });
    session.catch(reject);
  });
}
