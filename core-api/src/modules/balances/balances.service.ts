import type { AccountKey, IdentityKey, Member } from '@pts/shared';
import { resolveMember } from '../accounts/accounts.service.ts';
import { type MemberReading, readMemberFigures } from '../ledger/member-figures.ts';
import { readWalletBalance, type WalletBalance, type WalletBalanceDeps } from '../ledger/wallet-balance.ts';

/**
 * What a member can spend (modules/ledger/wallet-balance.ts) and their labelled figures at a brand
 * (modules/ledger/member-figures.ts): `/services/balance`, the seed-compatible balance answers and the
 * agent's member tools.
 */
export interface BalanceService {
  /** The live on-chain balance of the member's wallet, the rewards not yet confirmed and the pts reserved. */
  read(identityKey: IdentityKey | AccountKey): Promise<WalletBalance>;
  /** The member's figures at `brandId`: the one read every member surface answers from. */
  figures(brandId: string, member: IdentityKey | Member): Promise<MemberReading>;
}

export function createBalanceService(deps: WalletBalanceDeps): BalanceService {
  return {
    read: (identityKey) => readWalletBalance(deps, identityKey),
    async figures(brandId, member) {
      const resolved = typeof member === 'string' ? await resolveMember(deps.db, member) : member;
      return readMemberFigures(deps, brandId, resolved);
    },
  };
}
