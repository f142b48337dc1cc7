/** What the chain exposes to health checks and diagnostics. */
export interface ChainInfo {
  chainId: number;
  rpcUrl: string;
  contracts: Record<string, `0x${string}`>;
  minterAddress: `0x${string}`;
  explorerUrl: string;
  /** Resolves with the latest block number; throws when the RPC is unreachable. */
  ping(): Promise<bigint>;
}
