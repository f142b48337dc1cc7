import type { Member } from '@pts/shared';
import { memberToken, walletToken } from '../../modules/ledger/member-answers.ts';
import { spendableBalance } from '../../modules/ledger/wallet-balance.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';

/**
 * What a member may spend now (modules/ledger spendableBalance: the wallet on chain less pending redemptions)
 * and what an answer built on it depends on: the member tools that judge a redemption (recommendations, goals,
 * find_deals, stack_commerce) read this, the balance redeem_perk judges with — never a sum of the events.
 */
export async function readMemberSpendable(d: Pick<AgentToolDeps, 'walletBalances'>, member: Member) {
  const wallet = await d.walletBalances.read(member.accountKey);
  return {
    spendable: spendableBalance(wallet),
    /** The member's identities and wallet: a write to any of them drops the answer. */
    tokens: [
      ...member.identityKeys.map(memberToken),
      ...(wallet.walletAddress ? [walletToken(wallet.walletAddress)] : []),
    ],
    /** The answer holds an on-chain read; kept only while nothing of the wallet is in flight. */
    chain: wallet.walletAddress !== null,
    keep: wallet.settled,
  };
}

export type MemberSpendable = Awaited<ReturnType<typeof readMemberSpendable>>;
