import { AppError } from '@pts/shared';
import type { AgentToolContext } from '../agent-tool.ts';

/**
 * The brands whose member data a key may read: the key's own (`principal.brandIds`), narrowed to
 * `brandId` when one is asked. A member's data at other brands is never read, so a hostile key learns
 * nothing about members it does not serve (docs/decisions.md ("Agent API", "Intelligence tools")).
 */
export function memberScope(context: AgentToolContext, brandId?: string): string[] {
  const held = context.principal?.brandIds ?? [];
  if (held.length === 0) throw new AppError('FORBIDDEN', 'This agent key acts for no brand; member data is per brand');
  if (brandId === undefined) return held;
  if (!held.includes(brandId)) throw new AppError('FORBIDDEN', `This agent key does not act for brand ${brandId}`);
  return [brandId];
}

/** The 404 for a member with no activity at the key's brands (same answer whether they exist elsewhere). */
export function memberNotFound(userId: string): AppError {
  return new AppError('NOT_FOUND', `No member ${userId} at the brands this key acts for`);
}

/** `[now − days, now)`, the window every intelligence answer states in `basis`. */
export function windowOf(now: Date, days: number): { from: Date; to: Date; days: number } {
  return { from: new Date(now.getTime() - days * 86_400_000), to: now, days };
}
