import { z } from 'zod';

/** "Unlimited" as the spec writes it (`max_claims_per_user` -1). */
export const UNLIMITED = -1;

/**
 * A limit given to an agent tool (maxClaims, maxSupply, maxPerUser…): a whole number from 1 to `max`, or
 * unlimited spelled the same way on every tool — the spec's -1, or null (0 too, the spec's example shape and
 * what these tools took before). The output is the limit, or null for unlimited; each service stores null in
 * its own encoding (a rule's -1, a perk's null supply or 0 per user).
 */
export function limitSchema(max: number) {
  const message = `must be a whole number from 1 to ${max}, or -1 (or null) for unlimited`;
  return z
    .number({ message })
    .int(message)
    .min(-1, message)
    .max(max, message)
    .nullable()
    .transform((value): number | null => (value === null || value <= 0 ? null : value))
    .meta({ description: `A limit from 1 to ${max}; -1 or null = unlimited (0 is read as unlimited too)` });
}
