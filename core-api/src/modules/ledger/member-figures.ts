import type { Member, MemberFigures } from '@pts/shared';
import type { Database } from '../../db/database.ts';
import { type MemberLedger, readMemberLedger } from './member-ledger.ts';
import { readWalletBalance, spendableBalance, type WalletBalance, type WalletBalanceDeps } from './wallet-balance.ts';

/**
 * A member's figures at a brand (docs/ledger.md, "One balance, one set of labels"): the wallet read on chain
 * and the member ledger, read together. `/services/balance` (and the bots' /balance through it), the portal's
 * member page, `get_user_balance` and `get_user_stats` all read this and answer `figures` from it, so the
 * same member at the same moment shows the same numbers under the same names everywhere.
 */
export interface MemberReading {
  figures: MemberFigures;
  wallet: WalletBalance;
  ledger: MemberLedger;
}

export async function readMemberFigures(
  deps: WalletBalanceDeps,
  brandId: string,
  member: Member,
): Promise<MemberReading> {
  const [wallet, ledger] = await Promise.all([
    readWalletBalance(deps, member.accountKey),
    readMemberLedger(deps.db, brandId, member),
  ]);
  const debt = (await readMemberDebts(deps.db, [brandId], wallet.walletAddress)).get(brandId) ?? 0n;
  return { figures: memberFiguresOf(wallet, ledger, debt), wallet, ledger };
}

/**
 * What the wallet owes each of `brandIds`: `member_debts`, written by the reversal outbox when a reversal settles
 * with debt (read here, not through modules/reversals, which reads the ledger: feature folders import one way).
 * A brand it owes nothing is absent (0).
 */
export async function readMemberDebts(
  db: Database,
  brandIds: string[],
  walletAddress: string | null,
): Promise<Map<string, bigint>> {
  if (walletAddress === null || brandIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('member_debts')
    .select(['brand_id', 'debt'])
    .where('brand_id', 'in', brandIds)
    .where('wallet_address', '=', walletAddress.toLowerCase())
    .execute();
  return new Map(rows.map((row) => [row.brand_id, BigInt(row.debt)]));
}

/** The labelled figures of one wallet read and one ledger read: the only place they are named. */
export function memberFiguresOf(wallet: WalletBalance, ledger: MemberLedger, debt: bigint): MemberFigures {
  return {
    walletAddress: wallet.walletAddress,
    counts: 'wallet-on-chain+ledger',
    onChain: wallet.balance,
    pending: wallet.pending,
    reserved: Number(wallet.reserved),
    spendable: Number(spendableBalance(wallet)),
    earned: {
      total: Number(ledger.earned),
      confirmed: Number(ledger.confirmed),
      pending: Number(ledger.pending),
      unminted: Number(ledger.unminted),
      reversed: Number(ledger.reversed),
    },
    debt: Number(debt),
  };
}
