import type { Database } from '../../db/database.ts';
import { type PerkClaimFacts, readPerkClaimFacts } from '../../modules/perks/perks.repository.ts';
import { judgeRedemption, redemptionTermsOf } from '../../modules/perks/redemption-rule.ts';

/**
 * At each of `brandIds`, the most expensive perk (ties: the oldest) that the member (`userKeys`, their
 * identities) may redeem with `spendable` pts now: the one judgeRedemption, as redeem_perk asks it — active,
 * on chain, not sold out, not one they already hold the per-member maximum of. The facts come from the perks
 * module in one statement for every brand; brands where none is allowed are absent. `changesAt`: the first
 * moment after `now` a perk read opens or closes its redemption window (the answer may change then).
 */
export async function bestAffordablePerks(
  db: Database,
  brandIds: string[],
  spendable: bigint,
  userKeys: string[],
  now: Date,
): Promise<{ best: Map<string, PerkClaimFacts>; changesAt: Date | undefined }> {
  const best = new Map<string, PerkClaimFacts>();
  if (brandIds.length === 0 || userKeys.length === 0) return { best, changesAt: undefined };
  const perks = await readPerkClaimFacts(db, { brandIds, memberKeys: userKeys, maxCost: spendable });
  let changesAt: Date | undefined;
  for (const perk of perks) {
    for (const edge of [perk.starts_at, perk.ends_at]) {
      const at = edge ? new Date(edge) : undefined;
      if (at && at > now && (!changesAt || at < changesAt)) changesAt = at;
    }
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
  return { best, changesAt };
}
