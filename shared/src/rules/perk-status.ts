import { windowStatusAt } from './windows.ts';

/**
 * Where a perk stands for a member who would redeem it now, as every surface names it (issue 33 §14: the
 * portal listed a sold-out perk as "active"). The first that holds, in this order:
 * - `archived`: the brand withdrew it (in no catalogue, redemptions refused; issue 33 §11);
 * - `not_on_chain`: its PerkNFT collection is not confirmed yet;
 * - `inactive`: switched off by the brand;
 * - `scheduled`: its redemption window opens later (`startsAt` included);
 * - `ended`: its window closed (`endsAt` excluded: at `endsAt` exactly it has ended), the one window rule
 *   of drops and campaigns (`windows.ts`);
 * - `sold_out`: as many claimed as its supply (null supply: unlimited);
 * - `active`: redeemable (the catalogue's `available`).
 */
export const PERK_STATUSES = [
  'archived',
  'not_on_chain',
  'inactive',
  'scheduled',
  'ended',
  'sold_out',
  'active',
] as const;
export type PerkStatus = (typeof PERK_STATUSES)[number];

export interface PerkStatusInput {
  active: boolean;
  onChain: boolean;
  startsAt: Date | string | null;
  endsAt: Date | string | null;
  maxSupply: number | bigint | null;
  /** When the brand archived it (absent or null: not archived). */
  archivedAt?: Date | string | null | undefined;
}

/** The perk's status at `now`, with `claimed` perks claimed so far (PerkNFT.totalClaimed). */
export function perkStatusAt(perk: PerkStatusInput, claimed: number | bigint, now: Date): PerkStatus {
  if (perk.archivedAt) return 'archived';
  if (!perk.onChain) return 'not_on_chain';
  if (!perk.active) return 'inactive';
  const window = windowStatusAt(perk, now);
  if (window !== 'active') return window;
  if (perk.maxSupply !== null && BigInt(claimed) >= BigInt(perk.maxSupply)) return 'sold_out';
  return 'active';
}

/** How the portal words each status. */
export const PERK_STATUS_TEXT: Record<PerkStatus, string> = {
  archived: 'archived',
  not_on_chain: 'not on chain yet',
  inactive: 'inactive',
  scheduled: 'not open yet',
  ended: 'ended',
  sold_out: 'sold out',
  active: 'active',
};
