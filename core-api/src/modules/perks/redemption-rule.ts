import { AppError, isWithinWindow, type PerkCatalogueItem } from '@pts/shared';
import type { PerkRow } from './perks.repository.ts';

/**
 * The one rule that decides whether a member may redeem a perk (docs/perks.md "Who may redeem a perk"). The
 * redemption itself asks it under its row lock with live chain facts; every recommendation (find_deals with a
 * member, stack_commerce, get_user_recommendations, get_user_goals) asks it with the facts it read once for
 * the whole request, so nothing is offered that the redemption would then refuse.
 */

/** Why a redemption is refused, in the order the rule checks them (the first one is the answer). */
export const REDEMPTION_REFUSALS = [
  'archived',
  'not_on_chain',
  'inactive',
  'outside_window',
  'tier_required',
  'insufficient_balance',
  'sold_out',
  'claim_limit_reached',
  'not_eligible',
] as const;
export type RedemptionRefusal = (typeof REDEMPTION_REFUSALS)[number];

/** Everything the rule needs about one perk and one member; amounts in whole pts. */
export interface RedemptionFacts {
  perk: {
    cost: bigint;
    /** The brand archived the perk (docs/portal.md, "Undo"): never redeemable while archived. */
    archived?: boolean | undefined;
    /** The perk's own switch. */
    active: boolean;
    /** Inside its redemption window now (startsAt ≤ now < endsAt); absent = no window to judge. */
    inWindow?: boolean | undefined;
    /** Its PerkNFT collection exists (chain_status `synced`): a perk not on chain cannot be claimed yet. */
    onChain: boolean;
    /** null = unlimited. */
    maxSupply: bigint | null;
    /** 0 = unlimited (the contract's encoding). */
    maxPerUser: bigint;
  };
  /** What the member can spend (balance minus what pending redemptions hold), never below 0. */
  spendable: bigint;
  /** Claims of the perk by anyone: mined plus pending. */
  claimedTotal: bigint;
  /** The member's own claims of the perk: mined plus pending. */
  memberClaims: bigint;
  /**
   * The perk's eligibility constraints: `true` met, `false` not met, undefined not checked (recommendations do
   * not call external APIs per perk; the redemption checks them before paying).
   */
  eligible?: boolean | undefined;
  /** The perk is kept for a VIP tier and up (docs/tiers.md): the tier it needs, the member's, and whether it is met. */
  tier?: { required: string; held: string; met: boolean } | undefined;
}

/** The rule's answer: allowed, or every reason it is refused (`refusal` is the first, the one to tell). */
export type RedemptionDecision =
  | { allowed: true; refusals: RedemptionRefusal[]; missing: 0n }
  | { allowed: false; refusal: RedemptionRefusal; refusals: RedemptionRefusal[]; missing: bigint };

/** Decides one redemption. Pure: the same facts always give the same decision. */
export function judgeRedemption(facts: RedemptionFacts): RedemptionDecision {
  const { perk } = facts;
  const refusals: RedemptionRefusal[] = [];
  if (perk.archived) refusals.push('archived');
  if (!perk.onChain) refusals.push('not_on_chain');
  if (!perk.active) refusals.push('inactive');
  if (perk.inWindow === false) refusals.push('outside_window');
  if (facts.tier && !facts.tier.met) refusals.push('tier_required');
  const missing = perk.cost > facts.spendable ? perk.cost - facts.spendable : 0n;
  if (missing > 0n) refusals.push('insufficient_balance');
  if (perk.maxSupply !== null && facts.claimedTotal >= perk.maxSupply) refusals.push('sold_out');
  if (perk.maxPerUser > 0n && facts.memberClaims >= perk.maxPerUser) refusals.push('claim_limit_reached');
  if (facts.eligible === false) refusals.push('not_eligible');
  const [refusal] = refusals;
  if (refusal === undefined) return { allowed: true, refusals: [], missing: 0n };
  return { allowed: false, refusal, refusals, missing };
}

/** Whether `now` is inside the perk's redemption window (docs/perks.md): the one window rule of `shared/`. */
export function withinWindow(row: Pick<PerkRow, 'starts_at' | 'ends_at'>, now: Date): boolean {
  return isWithinWindow({ startsAt: row.starts_at, endsAt: row.ends_at }, now);
}

/** A perk row's terms as the rule reads them, at `now`. */
export function redemptionTermsOf(
  row: Pick<PerkRow, 'cost' | 'active' | 'chain_status' | 'max_supply' | 'max_per_user' | 'starts_at' | 'ends_at'> &
    Partial<Pick<PerkRow, 'archived_at'>>,
  now: Date,
): RedemptionFacts['perk'] {
  return {
    cost: row.cost,
    archived: row.archived_at != null,
    active: row.active,
    inWindow: withinWindow(row, now),
    onChain: row.chain_status === 'synced',
    maxSupply: row.max_supply,
    maxPerUser: row.max_per_user,
  };
}

/**
 * The decision for a catalogue item (synced perks with their live claimed count) and a member who can spend
 * `spendable` and holds `memberClaims` of it: what every recommendation asks before offering a perk.
 */
export function judgeCatalogueItem(item: PerkCatalogueItem, spendable: bigint, memberClaims: bigint) {
  return judgeRedemption({
    perk: {
      cost: BigInt(item.cost),
      active: item.active,
      onChain: true,
      maxSupply: item.maxSupply === null ? null : BigInt(item.maxSupply),
      maxPerUser: BigInt(item.maxPerUser),
    },
    spendable,
    claimedTotal: BigInt(item.totalClaimed),
    memberClaims,
  });
}

/**
 * Whether more pts are all the member lacks: the perk is worth recommending or setting as a goal (a perk
 * refused for any other reason is never offered).
 */
export function redeemableWithEnoughPts(decision: RedemptionDecision): boolean {
  return decision.refusals.every((refusal) => refusal === 'insufficient_balance');
}

/** What a refusal is called where the answer names it for a person (notes of the agent tools). */
export const REFUSAL_TEXT: Record<RedemptionRefusal, string> = {
  archived: 'archived by the brand',
  not_on_chain: 'not on chain yet',
  inactive: 'not active',
  outside_window: 'outside its redemption window',
  tier_required: 'kept for a higher VIP tier',
  insufficient_balance: 'not enough pts',
  sold_out: 'sold out',
  claim_limit_reached: 'the member already holds the per-user maximum',
  not_eligible: 'an eligibility constraint is not met',
};

/** The redemption's error for a refusal (409, except NOT_ELIGIBLE 403), with the numbers a caller acts on. */
export function redemptionRefused(
  decision: Extract<RedemptionDecision, { allowed: false }>,
  facts: RedemptionFacts,
  context: {
    perkId: bigint;
    perkName: string;
    member: string;
    reservedByPending?: bigint | undefined;
    window?: { startsAt: Date | null; endsAt: Date | null } | undefined;
  },
): AppError {
  const { perk } = facts;
  const perkId = Number(context.perkId);
  const name = `"${context.perkName}"`;
  switch (decision.refusal) {
    case 'not_on_chain':
      return new AppError('PERK_UNAVAILABLE', `${name} is not on chain yet; try again shortly`, {
        perkId,
        reason: 'not_on_chain',
      });
    case 'archived':
      return new AppError('PERK_UNAVAILABLE', `${name} was archived by the brand and can no longer be redeemed`, {
        perkId,
        reason: 'archived',
      });
    case 'inactive':
      return new AppError('PERK_UNAVAILABLE', `${name} is not active`, { perkId, reason: 'inactive' });
    case 'outside_window':
      return new AppError('PERK_UNAVAILABLE', `${name} can be redeemed only inside its window${windowText(context)}`, {
        perkId,
        reason: 'outside_window',
        ...(context.window?.startsAt ? { startsAt: context.window.startsAt.toISOString() } : {}),
        ...(context.window?.endsAt ? { endsAt: context.window.endsAt.toISOString() } : {}),
      });
    case 'tier_required':
      return new AppError(
        'NOT_ELIGIBLE',
        `${name} is only for members at the ${facts.tier?.required} tier or above; ${context.member} is ${facts.tier?.held}`,
        { perkId, reason: 'tier_required', requiredTier: facts.tier?.required, memberTier: facts.tier?.held },
      );
    case 'insufficient_balance':
      return new AppError(
        'INSUFFICIENT_BALANCE',
        `${context.member} has ${facts.spendable} tokens to spend; ${name} costs ${perk.cost}: ${decision.missing} more needed`,
        {
          balance: Number(facts.spendable),
          cost: Number(perk.cost),
          missing: Number(decision.missing),
          ...(context.reservedByPending ? { reservedByPendingRedemptions: Number(context.reservedByPending) } : {}),
        },
      );
    case 'sold_out':
      return new AppError('SOLD_OUT', `${name} is sold out (${perk.maxSupply} of ${perk.maxSupply} claimed)`, {
        perkId,
        maxSupply: Number(perk.maxSupply),
        totalClaimed: Number(facts.claimedTotal),
      });
    case 'claim_limit_reached':
      return new AppError(
        'CLAIM_LIMIT_REACHED',
        `${context.member} already has ${facts.memberClaims} of ${name}; the limit is ${perk.maxPerUser} per user`,
        { perkId, currentClaims: Number(facts.memberClaims), maxPerUser: Number(perk.maxPerUser) },
      );
    case 'not_eligible':
      return new AppError('NOT_ELIGIBLE', `Not eligible for ${name}`, { perkId, reason: 'not_eligible' });
  }
}

/** ` (from … until …)` for a refusal's message. */
function windowText(context: { window?: { startsAt: Date | null; endsAt: Date | null } | undefined }): string {
  const parts = [
    context.window?.startsAt ? `from ${context.window.startsAt.toISOString()}` : '',
    context.window?.endsAt ? `until ${context.window.endsAt.toISOString()}` : '',
  ].filter(Boolean);
  return parts.length > 0 ? ` (${parts.join(' ')})` : '';
}
