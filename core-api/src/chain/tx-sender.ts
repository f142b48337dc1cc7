import {
  type Address,
  type Hex,
  keccak256,
  type LocalAccount,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
} from 'viem';
import type { Database } from '../db/database.ts';
import type { ChainPublicClient } from './deploy.ts';
import { readNextNonce } from './nonces.ts';

/**
 * What the minter and the relayer share to get a signer's transactions on chain: one signing lock and nonce
 * counter per key, a short-lived fee estimate, sends in signing order (grouped while one is on its way) with
 * the nodes' error wordings classified, receipts that tell "not mined yet" from an RPC failure, and
 * replacement fees for a stuck transaction. Each caller keeps its own table and bookkeeping (the minter's
 * `chain_txs` outbox, the relayer's `relay_transactions`).
 */

/** How a send went: accepted, already in the pool, the nonce already used (mined or taken), or failed. */
export type SendOutcome = 'sent' | 'known' | 'nonce_consumed' | 'failed';

export interface SendResult {
  outcome: SendOutcome;
  /** The node's error, for `nonce_consumed` and `failed`. */
  error?: unknown;
}

/** EIP-1559 fees to sign with; `networkGasPrice` (eth_gasPrice) when the sender was asked to read it. */
export interface NetworkFees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  networkGasPrice?: bigint;
}

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** Node messages meaning "this exact transaction is already in the pool" (geth, reth, anvil wordings). */
const KNOWN_TX = /already known|known transaction|already imported|already exists|transaction already in/i;
/** The nonce was used by a mined transaction: ours (the tracker finds its receipt) or someone else's. */
const NONCE_CONSUMED = /nonce too low|nonce has already been used|invalid nonce|noncetoolow/i;
/** How long a fee estimate is reused. */
const FEE_CACHE_MS = 2_000;

/** Every message and detail along an error's cause chain (viem nests the node's answer). */
export function errorText(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth++) {
    const entry = current as { message?: unknown; details?: unknown; cause?: unknown };
    if (typeof entry.message === 'string') parts.push(entry.message);
    if (typeof entry.details === 'string') parts.push(entry.details);
    current = entry.cause;
  }
  return parts.join(' | ') || String(error);
}

/** errorText cut to what fits a log line or a `last_error` column. */
export function shortError(error: unknown): string {
  return errorText(error).slice(0, 500);
}

/** A reason to show a caller: viem's short message (not its multi-line help) with the node's details, ≤ 500 chars. */
export function errorReason(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth++) {
    const entry = current as { shortMessage?: unknown; message?: unknown; details?: unknown; cause?: unknown };
    if (typeof entry.shortMessage === 'string') parts.push(entry.shortMessage);
    else if (typeof entry.message === 'string') parts.push(entry.message);
    if (typeof entry.details === 'string') parts.push(entry.details);
    current = entry.cause;
  }
  return (parts.join(' | ') || String(error)).slice(0, 500);
}

export function maxOf(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

export function minOf(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

/** +25%: nodes require at least +10% (geth) or +12.5% on both fee fields to replace; this leaves headroom. */
export function bumpFee(value: bigint): bigint {
  return (value * 125n) / 100n + 1n;
}

/**
 * Fees for replacing a transaction signed with `previous`: +25% on both fields and at least the network's,
 * never above `cap`. Undefined when the cap leaves less than the +12.5% nodes require.
 */
export function replacementFees(previous: Fees, network: Fees, cap?: bigint): Fees | undefined {
  let maxFeePerGas = maxOf(bumpFee(previous.maxFeePerGas), network.maxFeePerGas);
  let maxPriorityFeePerGas = maxOf(bumpFee(previous.maxPriorityFeePerGas), network.maxPriorityFeePerGas);
  maxFeePerGas = cap === undefined ? maxOf(maxFeePerGas, maxPriorityFeePerGas) : minOf(maxFeePerGas, cap);
  maxPriorityFeePerGas = minOf(maxPriorityFeePerGas, maxFeePerGas);
  const enough = (next: bigint, before: bigint) => next * 1000n >= before * 1125n;
  if (!enough(maxFeePerGas, previous.maxFeePerGas) || !enough(maxPriorityFeePerGas, previous.maxPriorityFeePerGas)) {
    return undefined;
  }
  return { maxFeePerGas, maxPriorityFeePerGas };
}

export interface TxSenderOptions {
  db: Database;
  publicClient: ChainPublicClient;
  account: LocalAccount;
  chainId: number;
  /** The table recording this signer's transactions: its highest nonce holds even before a send. */
  table: 'chain_txs' | 'relay_transactions';
  /** Broadcasts a signed transaction; injectable so tests can fail it the way a crash or outage would. */
  sendRawTransaction?: ((serializedTransaction: Hex) => Promise<Hex>) | undefined;
  /** Also read eth_gasPrice with every fee estimate (the relayer compares it with its cap). */
  readGasPrice?: boolean;
}

export interface TxSender {
  readonly address: Address;
  /** Serialises nonce allocation: a rolled-back transaction gives its nonce back before anyone takes the next. */
  withSigningLock<T>(fn: () => Promise<T>): Promise<T>;
  /** The nonce to sign with next (read from chain and table when unknown). Call under the signing lock. */
  nextNonce(): Promise<bigint>;
  /** The next nonce as last known, without reading it; undefined when unknown. */
  peekNonce(): bigint | undefined;
  /** A transaction with `nonce` was committed: the next one takes `nonce + 1`. */
  nonceUsed(nonce: bigint): void;
  /** The next nonce is unknown again (another signer took one, or a send found it used): re-read next time. */
  forgetNonce(): void;
  /** The next nonce read afresh from chain and table (no cache). */
  readNonce(): Promise<bigint>;
  /** A fee estimate, reused for 2 s unless `fresh`. */
  fees(fresh?: boolean): Promise<NetworkFees>;
  /** Signs an EIP-1559 transaction; its raw form and hash. */
  sign(tx: { nonce: bigint; to: Address; data: Hex; gas: bigint; value: bigint } & Fees): Promise<{
    raw: Hex;
    hash: Hex;
  }>;
  /**
   * Sends in signing (nonce) order, overlapping with the signing of the next transaction: while one send is
   * on its way, those queued meanwhile go together (one JSON-RPC batch on a batching transport). Nodes hold
   * a transaction whose nonce arrives early until the gap closes, so order within a group is a courtesy.
   * Never throws; a used nonce forgets the nonce counter.
   */
  send(raw: Hex): Promise<SendResult>;
  /** Resolves when nothing is being sent. */
  drained(): Promise<void>;
  /** The receipt, or null while not mined; an RPC failure throws (it must never look like a dropped transaction). */
  receipt(hash: Hex): Promise<TransactionReceipt | null>;
}

/** One sender's shared state: the signing queue's tail, the nonce counter, the fee cache and the send queue. */
interface SenderState {
  signingTail: Promise<unknown>;
  nextNonce: bigint | undefined;
  cachedFees: { fees: NetworkFees; at: number } | undefined;
  queue: { raw: Hex; done(result: SendResult): void }[];
  sending: Promise<void> | undefined;
  broadcast: (serializedTransaction: Hex) => Promise<Hex>;
}

export function createTxSender(options: TxSenderOptions): TxSender {
  const { db, publicClient, account, chainId, table } = options;
  const state: SenderState = {
    signingTail: Promise.resolve(),
    nextNonce: undefined,
    cachedFees: undefined,
    queue: [],
    sending: undefined,
    broadcast:
      options.sendRawTransaction ??
      ((serializedTransaction: Hex) => publicClient.sendRawTransaction({ serializedTransaction })),
  };
  const readNonce = () => readNextNonce({ db, publicClient, table, chainId, address: account.address });
  return {
    address: account.address,
    withSigningLock(fn) {
      const run = state.signingTail.then(fn);
      state.signingTail = run.catch(() => undefined);
      return run;
    },
    async nextNonce() {
      state.nextNonce ??= await readNonce();
      return state.nextNonce;
    },
    peekNonce: () => state.nextNonce,
    nonceUsed(nonce) {
      state.nextNonce = nonce + 1n;
    },
    forgetNonce() {
      state.nextNonce = undefined;
    },
    readNonce,
    fees: (fresh = false) => readFees(options, state, fresh),
    sign: (tx) => signEip1559(account, chainId, tx),
    send: (raw) => queueSend(state, raw),
    async drained() {
      await state.signingTail;
      while (state.sending) await state.sending;
    },
    receipt: (hash) => readReceipt(publicClient, hash),
  };
}

/** A fee estimate, reused for FEE_CACHE_MS unless `fresh`; with eth_gasPrice when the sender reads it. */
async function readFees(
  options: Pick<TxSenderOptions, 'publicClient' | 'readGasPrice'>,
  state: SenderState,
  fresh: boolean,
): Promise<NetworkFees> {
  const now = performance.now();
  if (!fresh && state.cachedFees && now - state.cachedFees.at < FEE_CACHE_MS) return state.cachedFees.fees;
  const [estimate, networkGasPrice] = await Promise.all([
    options.publicClient.estimateFeesPerGas({ type: 'eip1559' }),
    options.readGasPrice ? options.publicClient.getGasPrice() : Promise.resolve(undefined),
  ]);
  const fees: NetworkFees = {
    maxFeePerGas: estimate.maxFeePerGas,
    maxPriorityFeePerGas: estimate.maxPriorityFeePerGas,
    ...(networkGasPrice === undefined ? {} : { networkGasPrice }),
  };
  state.cachedFees = { fees, at: now };
  return fees;
}

/** Signs an EIP-1559 transaction; its raw form and hash. */
async function signEip1559(
  account: LocalAccount,
  chainId: number,
  tx: { nonce: bigint; to: Address; data: Hex; gas: bigint; value: bigint } & Fees,
): Promise<{ raw: Hex; hash: Hex }> {
  const raw = await account.signTransaction({
    type: 'eip1559',
    chainId,
    nonce: Number(tx.nonce),
    to: tx.to,
    data: tx.data,
    gas: tx.gas,
    value: tx.value,
    maxFeePerGas: tx.maxFeePerGas,
    maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
  });
  return { raw, hash: keccak256(raw) };
}

/** Queues a send; it goes with the next group (TxSender.send). */
function queueSend(state: SenderState, raw: Hex): Promise<SendResult> {
  return new Promise<SendResult>((done) => {
    state.queue.push({ raw, done });
    pumpSends(state);
  });
}

/** Sends everything queued as one group unless a group is on its way; then the next group. */
function pumpSends(state: SenderState): void {
  if (state.sending || state.queue.length === 0) return;
  const group = state.queue;
  state.queue = [];
  state.sending = Promise.all(group.map(({ raw, done }) => sendOnce(state, raw).then(done)))
    .then(() => undefined)
    .finally(() => {
      state.sending = undefined;
      pumpSends(state);
    });
}

/** One broadcast, its node error classified; never throws. */
async function sendOnce(state: SenderState, raw: Hex): Promise<SendResult> {
  try {
    await state.broadcast(raw);
    return { outcome: 'sent' };
  } catch (error) {
    const text = errorText(error);
    if (KNOWN_TX.test(text)) return { outcome: 'known' };
    if (NONCE_CONSUMED.test(text)) {
      // Either this transaction already mined (its receipt settles it) or another sender used the nonce
      // (the tracker sees the nonce passed with no receipt). Re-read the nonce either way.
      state.nextNonce = undefined;
      return { outcome: 'nonce_consumed', error };
    }
    return { outcome: 'failed', error };
  }
}

/** The receipt, or null while not mined; any other RPC failure throws. */
async function readReceipt(publicClient: ChainPublicClient, hash: Hex): Promise<TransactionReceipt | null> {
  try {
    return await publicClient.getTransactionReceipt({ hash });
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return null;
    throw error;
  }
}
