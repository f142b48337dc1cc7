import { memberFiguresSchema } from '@pts/shared';
import { z } from 'zod';
import { requireBrandAuthority } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import type { MemberToolDeps } from './actions-tool-deps.ts';
import {
  earnedFields,
  earnedView,
  keptMemberAnswer,
  memberTokens,
  requireMember,
  userBrandParams,
  userNotFound,
} from './member-views.ts';

const resultSchema = z.object({
  brandId: z.string(),
  userId: z.string(),
  walletAddress: z.string().nullable(),
  balance: z.number().int(),
  pending: z.number().int(),
  ...earnedFields,
  totalRedeemed: z.number().int(),
  pendingRedeemed: z.number().int(),
  figures: memberFiguresSchema,
});

/** `get_user_balance`: A member's pts balance and what they earned and redeemed at a brand. */
export function getUserBalanceTool(d: MemberToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_user_balance',
    method: 'get',
    path: '/users/:userId/brands/:brandId/balance',
    summary: "A member's pts balance and what they earned and redeemed at a brand",
    description:
      "`balance` is the pts in the user's wallet right now, read on chain; pts are one token across brands, so " +
      'it is what they can spend at any brand. `pending` is rewards accepted for the wallet and not on chain yet ' +
      '(every brand). `figures` labels every figure as /services/balance, get_user_stats and the portal name them. `totalEarned` (rewards accepted at this brand, whatever their mint state) = ' +
      '`confirmedEarned` (minted: what the leaderboards rank) + `pendingEarned` (still minting); ' +
      '`totalRedeemed` (confirmed perk redemptions; `pendingRedeemed` still being mined) ' +
      "are this brand's only (docs/ledger.md). All amounts are whole pts. 404 when the user has no events or redemptions at " +
      'the brand; 403 when the key does not act for the brand.',
    access: 'key',
    request: { params: userBrandParams },
    result: resultSchema,
    example: (fixture) => ({ params: { userId: fixture.userId, brandId: fixture.brandId } }),
    async handle({ params }, context) {
      requireBrandAuthority(context.principal, params.brandId, "Reading a user's balance");
      return keptMemberAnswer(d, ['get_user_balance', params.brandId, params.userId], async () => {
        const { accountKey, identityKeys, ledger, wallet, figures } = await requireMember(
          d,
          context.principal,
          params,
          "Reading a user's balance",
        );
        if (!ledger.known) {
          return {
            value: { missing: userNotFound(params.userId, params.brandId) },
            tokens: memberTokens(params.userId, accountKey, identityKeys),
          };
        }
        return {
          value: {
            data: {
              brandId: params.brandId,
              userId: params.userId,
              walletAddress: figures.walletAddress,
              balance: figures.onChain,
              pending: figures.pending,
              ...earnedView(ledger),
              totalRedeemed: Number(ledger.redeemed),
              pendingRedeemed: Number(ledger.redeeming),
              figures,
            },
          },
          tokens: memberTokens(params.userId, accountKey, identityKeys, wallet.walletAddress),
          chain: wallet.walletAddress !== null,
          keep: wallet.settled,
        };
      });
    },
  });
}
