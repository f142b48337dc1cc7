import { brandIdSchema, cleanString } from '@pts/shared';
import { z } from 'zod';
import type { DirectoryBrand } from '../../discovery/brand-directory.repository.ts';

/** Brand categories an agent may filter by (spec 4.1 `GET /brands`). */
export const BRAND_CATEGORIES = ['retail', 'gaming', 'dining', 'travel'] as const;
/** Spec 8 bounds. */
export const BRANDS_LIST_MAX = 200;
export const PERKS_BROWSE_MAX = 100;
export const AGENT_LEADERBOARD_MAX = 100;
/** The leaderboard metrics of spec 4.1 (the services board also ranks `claims`; the agent API keeps to these). */
export const AGENT_LEADERBOARD_METRICS = ['pts_earned', 'streak', 'activity'] as const;

/** A whole-number query parameter (REST sends strings) within `min..max`, `fallback` when absent. */
export function boundedInt(name: string, min: number, max: number, fallback: number) {
  return z.coerce
    .number({ message: `${name} must be a number` })
    .int(`${name} must be a whole number`)
    .min(min, `${name} must be at least ${min}`)
    .max(max, `${name} must be at most ${max}`)
    .default(fallback);
}

/** A lowercase enum query parameter: `Retail` and `retail` are the same. */
export function lowerEnum<T extends readonly [string, ...string[]]>(values: T) {
  return cleanString(z.string().transform((value) => value.toLowerCase())).pipe(z.enum(values));
}

export const brandParams = z.object({ brandId: brandIdSchema });

export const brandViewSchema = z.object({
  brandId: z.string(),
  name: z.string(),
  /** The brand's website domain; events from the web must come from it or a verified domain. */
  domain: z.string(),
  verifiedDomains: z.array(z.string()),
  /** retail, gaming, dining, travel — null when the brand has no category (it is then only listed unfiltered). */
  category: z.string().nullable(),
  /** Automation on and at least one active event rule: the brand rewards events now. */
  acceptingEvents: z.boolean(),
  activeEvents: z.number().int(),
  activePerks: z.number().int(),
  createdAt: z.string(),
});
type BrandView = z.infer<typeof brandViewSchema>;

export function toBrandView({ automationEnabled, createdAt, ...brand }: DirectoryBrand): BrandView {
  return { ...brand, acceptingEvents: automationEnabled && brand.activeEvents > 0, createdAt: createdAt.toISOString() };
}
