import type { LedgerReconciliation, MintingState } from '@pts/shared';

/** What the chain exposes to health checks and diagnostics. */
export interface ChainInfo {
  chainId: number;
  rpcUrl: string;
  contracts: Record<string, `0x${string}`>;
  minterAddress: `0x${string}`;
  explorerUrl: string;
  /** Resolves with the latest block number; throws when the RPC is unreachable. */
  ping(): Promise<bigint>;
  /** The chain–ledger reconciler's last finding, where this process runs it (chain/reconciler.ts). */
  ledger?: () => LedgerReconciliation;
  /**
   * The minter's own view (without the chain probe): whether it signs, what waits, when it last mined, and
   * whether it is wedged (chain/minter.ts). `status` here is `ok` or `wedged`; health adds `queueing`.
   */
  minting?: () => MintingState;
}
