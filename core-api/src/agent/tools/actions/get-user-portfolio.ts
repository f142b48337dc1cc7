import type { Clock, MemberFigures } from '@pts/shared';
import { AppError, memberFiguresSchema } from '@pts/shared';
import { z } from 'zod';
import type { CachedBrand } from '../../../modules/events/brand-cache.ts';
import {
  brandPerksToken,
  brandSettingsToken,
  earliestAfter,
  nextUtcDay,
} from '../../../modules/ledger/member-answers.ts';
import { memberFiguresOf } from '../../../modules/ledger/member-figures.ts';
import type { MemberLedger } from '../../../modules/ledger/member-ledger.ts';
import type { WalletBalance } from '../../../modules/ledger/wallet-balance.ts';
import { cachedBrands } from '../../actions/cached-brands.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import type { MemberToolDeps } from './actions-tool-deps.ts';
import { userIdSchema } from './event-requests.ts';
import { earnedFields, earnedView, keptMemberAnswer, memberTokens } from './member-views.ts';
import type { AgentStreakView } from './streak-views.ts';
import { streakViewSchema, streakViews } from './streak-views.ts';

const affordablePerkSchema = z.object({
  brandId: z.string(),
  uuid: z.string(),
  perkId: z.number().int(),
  name: z.string(),
  category: z.string(),
  cost: z.number().int(),
});

function notInPortfolio(userId: string): AppError {
  return new AppError('NOT_FOUND', `${userId} has no events or redemptions at the brands this key acts for`, {
    field: 'userId',
    value: userId,
  });
}

const resultSchema = z.object({
  userId: z.string(),
  walletAddress: z.string().nullable(),
  balance: z.number().int(),
  spendable: z.number().int(),
  pending: z.number().int(),
  brands: z.array(
    z.object({
      brandId: z.string(),
      name: z.string(),
      ...earnedFields,
      totalRedeemed: z.number().int(),
      streak: streakViewSchema,
      bestAffordablePerk: affordablePerkSchema.nullable(),
      figures: memberFiguresSchema,
    }),
  ),
  activeStreaks: z.array(z.object({ brandId: z.string(), current: z.number().int() })),
  bestAffordablePerk: affordablePerkSchema.nullable(),
  note: z.string(),
});

/**
 * `get_user_portfolio`: A member's pts across the brands this key acts for: earnings, streaks, best affordable perk.
 */
export function getUserPortfolioTool(d: MemberToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_user_portfolio',
    method: 'get',
    path: '/users/:userId/portfolio',
    summary: "A member's pts across the brands this key acts for: earnings, streaks, best affordable perk",
    description:
      "The user's wallet (`balance` on chain, `spendable` = balance minus pending redemptions, `pending` " +
      'rewards not yet minted — pts are one token across brands; the same wallet and figures as get_user_balance, ' +
      'whichever linked identity is asked) and, for each brand THIS KEY acts for where ' +
      'the user has events or redemptions: pts earned and redeemed there, the daily streak, `figures` (labelled ' +
      'as get_user_balance labels them at that brand), and the most ' +
      'expensive active perk the spendable balance covers (null when none). Brands outside the key are never ' +
      'shown. `activeStreaks` lists streaks still counting; `bestAffordablePerk` is the most expensive ' +
      'affordable perk over those brands. 404 when the user is unknown to every brand of the key.',
    access: 'key',
    request: { params: z.object({ userId: userIdSchema }) },
    result: resultSchema,
    example: (fixture) => ({ params: { userId: fixture.userId } }),
    async handle({ params }, context) {
      const principal = context.principal;
      if (!principal) throw new AppError('UNAUTHORIZED', "Reading a user's portfolio needs an agent key");
      // In the key's order: the answer lists the brands so.
      const brandIds = [...new Set(principal.brandIds.map((id) => id.toLowerCase()))];
      return keptMemberAnswer(d, ['get_user_portfolio', brandIds.join(','), params.userId], () =>
        portfolioOf(d, context, brandIds, params.userId),
      );
    },
  });
}

type AffordablePerks = Awaited<ReturnType<MemberToolDeps['actionsReads']['bestAffordablePerks']>>['best'];

/** The key's brands that know the member, in the key's order: earnings, streak and best affordable perk. */
function portfolioBrands(
  knownIds: string[],
  names: CachedBrand[],
  wallet: WalletBalance,
  ledgers: Map<string, MemberLedger>,
  debts: Map<string, bigint>,
  streaks: Map<string, AgentStreakView>,
  best: AffordablePerks,
) {
  const nameOf = new Map(names.map(({ brand }) => [brand.address, brand.name]));
  return knownIds.flatMap((brandId) => {
    const name = nameOf.get(brandId);
    const ledger = ledgers.get(brandId);
    const streak = streaks.get(brandId);
    if (name === undefined || !ledger || !streak) return [];
    const perk = best.get(brandId);
    return [
      {
        brandId,
        name,
        ...earnedView(ledger),
        totalRedeemed: Number(ledger.redeemed),
        streak,
        bestAffordablePerk: perk
          ? {
              brandId,
              uuid: perk.public_id,
              perkId: Number(perk.id),
              name: perk.name,
              category: perk.category,
              cost: Number(perk.cost),
            }
          : null,
        figures: memberFiguresOf(wallet, ledger, debts.get(brandId) ?? 0n),
      },
    ];
  });
}

/** The most expensive affordable perk over the brands (the first listed on a tie). */
function mostExpensive(brands: ReturnType<typeof portfolioBrands>) {
  return brands
    .map((brand) => brand.bestAffordablePerk)
    .filter((perk) => perk !== null)
    .reduce<z.infer<typeof affordablePerkSchema> | null>(
      (top, perk) => (!top || perk.cost > top.cost ? perk : top),
      null,
    );
}

/** get_user_portfolio's answer over `brandIds` (the key's), with what it depends on. */
async function portfolioOf(d: MemberToolDeps, context: { clock: Clock }, brandIds: string[], userId: string) {
  const now = context.clock.now();
  const member = await d.actionsReads.resolveMember(userId);
  const { accountKey } = member;
  const keys = [...member.identityKeys];
  const [firstBrand] = brandIds;
  if (firstBrand === undefined) {
    return { value: { missing: notInPortfolio(userId) }, tokens: memberTokens(userId, accountKey, keys) };
  }
  // The member's figures (modules/ledger/member-figures.ts: the account's wallet, as get_user_balance reads it),
  // and their ledger and streak at every brand of the key, one statement each; only the brands that know them
  // are shown.
  const [reading, ledgers, streaks] = await Promise.all([
    d.actionsReads.readMemberFigures(firstBrand, member),
    d.actionsReads.readMemberLedgers(brandIds, member),
    streakViews(d, context, brandIds, accountKey),
  ]);
  const { wallet, figures } = reading;
  const tokens = [
    ...memberTokens(userId, accountKey, keys, wallet.walletAddress),
    ...brandIds.flatMap((brandId) => [brandSettingsToken(brandId), brandPerksToken(brandId)]),
  ];
  const chain = wallet.walletAddress !== null;
  const knownIds = brandIds.filter((brandId) => ledgers.get(brandId)?.known);
  if (knownIds.length === 0) return { value: { missing: notInPortfolio(userId) }, tokens, chain };
  const [names, perks, debts] = await Promise.all([
    cachedBrands(d, knownIds),
    d.actionsReads.bestAffordablePerks(knownIds, BigInt(figures.spendable), keys, now),
    d.actionsReads.readMemberDebts(knownIds, wallet.walletAddress),
  ]);
  const brands = portfolioBrands(knownIds, names, wallet, ledgers, debts, streaks, perks.best);
  if (brands.length === 0) return { value: { missing: notInPortfolio(userId) }, tokens, chain };
  return {
    value: { data: portfolioData(userId, figures, brands) },
    tokens,
    chain,
    keep: wallet.settled,
    // The day turning, a streak lapsing or a perk window opening or closing changes it by time alone.
    validUntil: earliestAfter(now, [
      nextUtcDay(now),
      perks.changesAt,
      ...[...streaks.values()].map((streak) => streak.expiresAt),
    ]),
  };
}

/** The answer: the wallet's figures (one token across brands) over the brands shown. */
function portfolioData(
  userId: string,
  figures: MemberFigures,
  brands: ReturnType<typeof portfolioBrands>,
): z.infer<typeof resultSchema> {
  return {
    userId,
    walletAddress: figures.walletAddress,
    balance: figures.onChain,
    spendable: figures.spendable,
    pending: figures.pending,
    brands,
    activeStreaks: brands
      .filter((b) => b.streak.active)
      .map((b) => ({ brandId: b.brandId, current: b.streak.current })),
    bestAffordablePerk: mostExpensive(brands),
    note: 'Only brands this agent key acts for are shown; balance and spendable are the one pts wallet.',
  };
}
