import type { AccountKey, Clock, IdentityKey, Member } from '@pts/shared';
import { accountIdentities, resolveAccountKey, resolveMember } from '../../modules/accounts/accounts.service.ts';
import { readAchievements } from '../../modules/achievements/achievements.service.ts';
import { type MemberReading, readMemberDebts } from '../../modules/ledger/member-figures.ts';
import { readMemberLedger, readMemberLedgers } from '../../modules/ledger/member-ledger.ts';
import type { WalletBalance } from '../../modules/ledger/wallet-balance.ts';
import { type DailyStreakView, readDailyStreaks } from '../../modules/streaks/streaks.service.ts';
import { findUsers } from '../../modules/users/users.repository.ts';
import { type AgentServiceDeps, type BoundToDatabase, bindDatabase } from '../agent-services.ts';
import { bestAffordablePerks } from './affordable-perks.ts';

const actionsReadFunctions = {
  resolveAccountKey,
  resolveMember,
  accountIdentities,
  findUsers,
  readMemberLedger,
  readMemberLedgers,
  readMemberDebts,
  readAchievements,
  bestAffordablePerks,
};

/**
 * The member reads of the action tools (actions.tools.ts) and of the agent services that show a member
 * (commerce earnings): accounts, ledgers, wallet, streaks, achievements and affordable perks, each the
 * owning module's own read, bound by compose.ts.
 */
export type ActionsReads = BoundToDatabase<typeof actionsReadFunctions> & {
  /** The wallet balance of a user (modules/ledger): pts are one token, so it is the same at every brand. */
  readWalletBalance(userId: IdentityKey): Promise<WalletBalance>;
  /** The member's labelled figures at a brand (modules/ledger/member-figures.ts): what every member surface shows. */
  readMemberFigures(brandId: string, member: Member): Promise<MemberReading>;
  /** A member's daily streak at each of `brandIds` (modules/streaks), as of `clock`. */
  readDailyStreaks(clock: Clock, brandIds: string[], accountKey: AccountKey): Promise<Map<string, DailyStreakView>>;
};

export function createActionsReads(d: AgentServiceDeps): ActionsReads {
  const { db } = d;
  return {
    ...bindDatabase(db, actionsReadFunctions),
    readWalletBalance: (userId) => d.walletBalances.read(userId),
    readMemberFigures: (brandId, member) => d.walletBalances.figures(brandId, member),
    readDailyStreaks: (clock, brandIds, accountKey) =>
      readDailyStreaks({ db, clock, logger: d.logger }, brandIds, accountKey),
  };
}
