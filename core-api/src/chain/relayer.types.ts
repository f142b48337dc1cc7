import type { Address, Hex } from 'viem';

/**
 * States of a relayed transaction (docs/relayer.md):
 *   queued → submitted → mined → confirmed
 *   queued | submitted → failed          (simulation/broadcast refused, or mined with a revert)
 *   submitted → replaced                 (only the superseded *hash*: the row keeps its id and moves on
 *                                         with the bumped hash; `hashes` keeps the history)
 * The relay response's `status` maps queued/submitted/mined → `pending`, confirmed → `confirmed`,
 * failed → `failed`.
 */
export type RelayTxStatus = 'queued' | 'submitted' | 'mined' | 'confirmed' | 'failed';

/** What the relayer is asked to send. */
export interface RelayTxRequest {
  to: Address;
  data: Hex;
  value?: bigint;
  /** Gas limit; estimated (and capped by PTS_RELAYER_MAX_GAS_LIMIT) when absent. */
  gasLimit?: bigint;
  /**
   * A `simulate()` estimate the caller just made: when `gasLimit` is absent the limit is this × 1.2 (capped)
   * and the sender does not simulate a second time. Without it the sender simulates itself.
   */
  gasEstimate?: bigint;
  /** The brand charged for the gas (the perk collection's brand), or null when no brand can be named. */
  brandId: string | null;
  /** The user the call was made for (rate limits, claim limits, audit). */
  userAddress: Address | null;
  /** What it is for: `relay`, `relay-permit`, `perk-redeem`, … (metrics, logs, the CLI). */
  purpose: string;
  /** Perk collection a claim is for; counted by the claim-limit check while the transaction is in flight. */
  collectionId?: bigint;
}

export interface RelayTransaction {
  /** Stable id (UUID) — `GET /relayer/transactions/:id`; the hash may change with a gas bump. */
  id: string;
  status: RelayTxStatus;
  /** The current hash; null while queued. */
  hash: Hex | null;
  /** Every hash this transaction was signed with, oldest first. */
  hashes: Hex[];
  from: Address;
  to: Address;
  brandId: string | null;
  userAddress: Address | null;
  purpose: string;
  collectionId: bigint | null;
  nonce: bigint | null;
  gasLimit: bigint | null;
  gasUsed: bigint | null;
  effectiveGasPrice: bigint | null;
  blockNumber: bigint | null;
  /** Why it failed (decoded revert or broadcast error), when it did. */
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Outcome of simulating a call from the relayer's address (eth_call + estimateGas). */
export type SimulationResult =
  | { ok: true; gasEstimate: bigint }
  | {
      ok: false;
      /** Human-readable reason, e.g. `InsufficientAllowance(user, 0, 50)`. */
      reason: string;
      /** Custom error name when the revert decodes against our ABIs. */
      errorName?: string;
    };

/** Gas the relayer spent for one brand (the CLI's `relayer gas`). */
export interface BrandGasUsage {
  brandId: string | null;
  transactions: number;
  gasUsed: bigint;
  /** Sum of gasUsed × effectiveGasPrice, in wei. */
  costWei: bigint;
}

/**
 * The relayer's transaction sender: signs with the relayer key only, owns that key's nonces, records every
 * transaction before broadcasting it (a crash loses nothing), tracks receipts and bumps stuck transactions.
 */
export interface RelayerSender {
  readonly address: Address;
  simulate(request: Pick<RelayTxRequest, 'to' | 'data' | 'value' | 'gasLimit'>): Promise<SimulationResult>;
  /** Records, signs and broadcasts; resolves once submitted (or failed). */
  submit(request: RelayTxRequest): Promise<RelayTransaction>;
  /** Resolves at `confirmed` / `failed`, or with the current state after `timeoutMs`. */
  waitFor(id: string, timeoutMs: number): Promise<RelayTransaction>;
  get(id: string): Promise<RelayTransaction | undefined>;
  gasByBrand(brandId?: string): Promise<BrandGasUsage[]>;
  start(): void;
  stop(): Promise<void>;
}
