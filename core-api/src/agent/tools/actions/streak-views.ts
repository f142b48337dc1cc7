import type { AccountKey, Clock } from '@pts/shared';
import { z } from 'zod';
import type { MemberReadDeps } from './actions-tool-deps.ts';

export const streakViewSchema = z.object({
  current: z.number().int(),
  longest: z.number().int(),
  /** The streak still counts (not lapsed) and is at least one day. */
  active: z.boolean(),
  checkedInToday: z.boolean(),
  multiplier: z.number(),
  lastActivityAt: z.string().nullable(),
  expiresAt: z.string().nullable(),
});

export type AgentStreakView = z.infer<typeof streakViewSchema>;

/**
 * A member's daily streak at each of `brandIds` (existing brands), as the member tools show it: one round
 * trip for any number of brands (readDailyStreaks, the streak service's own rules).
 */
export async function streakViews(
  d: MemberReadDeps,
  context: { clock: Clock },
  brandIds: string[],
  accountKey: AccountKey,
): Promise<Map<string, AgentStreakView>> {
  const views = await d.actionsReads.readDailyStreaks(context.clock, brandIds, accountKey);
  const shown = new Map<string, AgentStreakView>();
  for (const [brandId, status] of views) {
    shown.set(brandId, {
      current: status.currentStreak,
      longest: status.longestStreak,
      active: !status.lapsed && status.currentStreak > 0,
      checkedInToday: status.checkedInToday,
      multiplier: status.multiplier,
      lastActivityAt: status.lastActivityAt,
      expiresAt: status.streakExpiresAt,
    });
  }
  return shown;
}

/** A member's daily streak at one existing brand, as the member tools show it. */
export async function streakView(
  d: MemberReadDeps,
  context: { clock: Clock },
  brandId: string,
  userId: string,
): Promise<AgentStreakView> {
  const accountKey = await d.actionsReads.resolveAccountKey(userId);
  return (await streakViews(d, context, [brandId], accountKey)).get(brandId) as AgentStreakView;
}
