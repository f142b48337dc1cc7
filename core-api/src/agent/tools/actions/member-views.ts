import { type AccountKey, AppError, brandIdSchema } from '@pts/shared';
import { z } from 'zod';
import { type MemberAnswer, memberToken, walletToken } from '../../../modules/ledger/member-answers.ts';
import type { MemberReading } from '../../../modules/ledger/member-figures.ts';
import type { MemberLedger } from '../../../modules/ledger/member-ledger.ts';
import { requireBrandAuthority, requireKnownBrand } from '../../actions/brand-authority.ts';
import type { AgentPrincipal } from '../../agent-tool.ts';
import type { AgentToolDeps } from '../../agent-tool-deps.ts';
import type { MemberReadDeps } from './actions-tool-deps.ts';
import { userIdSchema } from './event-requests.ts';

export function userNotFound(userId: string, brandId?: string): AppError {
  return new AppError(
    'NOT_FOUND',
    brandId ? `${userId} has no events or redemptions at brand ${brandId}` : `No user ${userId} on pts`,
    { field: 'userId', value: userId },
  );
}

export const userBrandParams = z.object({ userId: userIdSchema, brandId: brandIdSchema });

/** The member ledger's earnings at one brand (docs/ledger.md): every member tool shows the same three. */
export const earnedFields = {
  totalEarned: z.number().int().describe('Rewards accepted for the member at the brand, whatever their mint state'),
  confirmedEarned: z
    .number()
    .int()
    .describe('The part of totalEarned recorded as minted: what the pts_earned leaderboards rank'),
  pendingEarned: z.number().int().describe('The part of totalEarned still being minted (queued or sent)'),
};

export function earnedView(ledger: MemberLedger) {
  return {
    totalEarned: Number(ledger.earned),
    confirmedEarned: Number(ledger.confirmed),
    pendingEarned: Number(ledger.pending),
  };
}

/**
 * The member's figures at a brand the key acts for (modules/ledger/member-figures.ts: the one read every
 * member surface answers from), with the ledger and wallet they were made of; the caller answers 404 when
 * `ledger.known` is false (the user never interacted with the brand).
 */
export async function requireMember(
  d: MemberReadDeps,
  principal: AgentPrincipal | undefined,
  params: { userId: string; brandId: string },
  action: string,
): Promise<MemberReading & { accountKey: AccountKey; identityKeys: string[] }> {
  requireBrandAuthority(principal, params.brandId, action);
  await requireKnownBrand(d, params.brandId);
  const member = await d.actionsReads.resolveMember(params.userId);
  const reading = await d.actionsReads.readMemberFigures(params.brandId, member);
  return { ...reading, accountKey: member.accountKey, identityKeys: [...member.identityKeys] };
}

/**
 * A member tool's answer kept by `d.memberAnswers` (modules/ledger/member-answers.ts) under `key` (tool,
 * brands, member, arguments), a 404 included: `compute` names what the answer depends on. The key's authority
 * is checked by the caller on every call, before this.
 */
export async function keptMemberAnswer<T>(
  d: Pick<AgentToolDeps, 'memberAnswers'>,
  key: string[],
  compute: () => Promise<MemberAnswer<{ data: T } | { missing: AppError }>>,
): Promise<T> {
  const kept = await d.memberAnswers.answer(key.join('\n'), compute);
  if ('missing' in kept) throw kept.missing;
  return kept.data;
}

/** What a member's answer depends on: every identity of the account, the wallet, the brands' settings. */
export function memberTokens(userId: string, accountKey: string, identityKeys: string[], wallet?: string | null) {
  return [...[userId, accountKey, ...identityKeys].map(memberToken), ...(wallet ? [walletToken(wallet)] : [])];
}
