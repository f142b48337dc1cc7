import { type Perk, UNLIMITED, UNLIMITED_CLAIMS } from '@pts/shared';
import { z } from 'zod';

/**
 * "Unlimited" as the agent API answers it (docs/decisions.md, "Agent API"): every limit — a rule's per-member
 * and total caps, a perk's supply and per-member maximum — reads -1 (UNLIMITED, the spec's `max_claims_per_user`
 * spelling) when there is none, the same value every agent tool takes on input (limitSchema). The stores keep
 * their own encodings (a rule's -1 or 999999, a total cap's or a supply's null, the contract's 0 per member);
 * figures derived from a limit that does not exist (what is left of it, days to sell out) stay null.
 */

/** A rule's per-member cap as stored (-1 or 999999 = unlimited, spec 2.3), as answered. */
export function ruleCapOut(maxClaims: number): number {
  return (UNLIMITED_CLAIMS as readonly number[]).includes(maxClaims) ? UNLIMITED : maxClaims;
}

/** A cap or supply stored as null for unlimited, as answered. */
export function optionalLimitOut(limit: number | null): number {
  return limit ?? UNLIMITED;
}

/** An amount-like limit answered as a decimal string (supply.max), "-1" when unlimited. */
export function limitTextOut(limit: bigint | null): string {
  return limit === null ? String(UNLIMITED) : limit.toString();
}

/** A perk's per-member maximum as the perk service and the contract store it (0 = unlimited), as answered. */
export function perUserLimitOut(maxPerUser: number): number {
  return maxPerUser <= 0 ? UNLIMITED : maxPerUser;
}

/** A perk (the admin view, or a catalogue item) with its limits as the agent API answers them. */
export function agentPerkLimits<P extends Pick<Perk, 'maxSupply' | 'maxPerUser'>>(perk: P): P {
  return { ...perk, maxSupply: optionalLimitOut(perk.maxSupply), maxPerUser: perUserLimitOut(perk.maxPerUser) };
}

/** A limitTextOut answer: a whole number as a decimal string, or "-1" for unlimited. */
export const limitTextSchema = z
  .string()
  .regex(/^(-1|\d+)$/)
  .describe('Whole number as a decimal string; -1 = unlimited');
