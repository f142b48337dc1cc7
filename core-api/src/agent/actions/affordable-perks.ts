import type { Database } from '../../db/database.ts';
import { type PerkClaimFacts, readPerkClaimFacts } from '../../modules/perks/perks.repository.ts';
import { judgeRedemption, redemptionTermsOf } from '../../modules/perks/redemption-rule.ts';

/**
 * At each of `brandIds`, the most expensive perk (ties: the oldest) that the member (`userKeys`, their
 * identities) may redeem with `spendable` pts now: the one judgeRedemption, as redeem_perk asks it — active,
 * on chain, not sold out, not one they already hold the per-member maximum of. The facts come from the perks
 * module in one statement for every brand; brands where none is allowed are absent.
 */
export async function bestAffordablePerks(
  db: Database,
  brandIds: string[],
  spendable: bigint,
  userKeys: string[],
  now: Date,
): Promise<Map<string, PerkClaimFacts>> {
  const best = new Map<string, PerkClaimFacts>();
  if (brandIds.length === 0 || userKeys.length === 0) return best;
  const perks = await readPerkClaimFacts(db, { brandIds, memberKeys: userKeys, maxCost: spendable });
  for (const perk of perks) {
    const decision = judgeRedemption({
      perk: redemptionTermsOf(perk, now),
      spendable,
      claimedTotal: perk.claimedTotal,
      memberClaims: perk.memberClaims,
    });
    if (!decision.allowed) continue;
    const top = best.get(perk.brand_id);
    // Perks come in id order: a later one replaces the best only when it costs more.
    if (!top || perk.cost > top.cost) best.set(perk.brand_id, perk);
  }
  return best;
}
