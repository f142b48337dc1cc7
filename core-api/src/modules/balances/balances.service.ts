import type { AccountKey, IdentityKey } from '@pts/shared';
import { readWalletBalance, type WalletBalance, type WalletBalanceDeps } from '../ledger/wallet-balance.ts';

/**
 * What a member can spend (modules/ledger/wallet-balance.ts): `/services/balance` and the seed-compatible
 * balance answers.
 */
export interface BalanceService {
  /** The live on-chain balance of the member's wallet, the rewards not yet confirmed and the pts reserved. */
  read(identityKey: IdentityKey | AccountKey): Promise<WalletBalance>;
}

export function createBalanceService(deps: WalletBalanceDeps): BalanceService {
  return { read: (identityKey) => readWalletBalance(deps, identityKey) };
}
