import { AppError } from '@pts/shared';
import { brandNotFound } from '../../modules/brands/brands.service.ts';
import type { AgentPrincipal, AgentToolPorts } from '../agent-tool.ts';

/**
 * An agent key acts for the brands in `principal.brandIds` and for no other (docs/decisions.md ("Agent API", "Discovery and action tools")):
 * it may send their events, redeem their perks and read their members' data. Anything else is a 403 that does
 * not say whether the brand or the user exists.
 */
export function requireBrandAuthority(principal: AgentPrincipal | undefined, brandId: string, action: string): void {
  if (!principal) {
    throw new AppError('UNAUTHORIZED', `${action} needs an agent key: sign the request (X-PTS-Agent-Key)`);
  }
  if (!actsFor(principal, brandId)) {
    throw new AppError(
      'FORBIDDEN',
      `${action}: agent key ${principal.keyId} does not act for brand ${brandId}; it acts for ${principal.brandIds.length === 0 ? 'no brand' : principal.brandIds.join(', ')}`,
      { brandId, reason: 'brand_not_in_key' },
    );
  }
}

/** Whether the key acts for the brand (Brand IDs compare lowercase). */
export function actsFor(principal: AgentPrincipal, brandId: string): boolean {
  const wanted = brandId.toLowerCase();
  return principal.brandIds.some((id) => id.toLowerCase() === wanted);
}

/**
 * 404 unless the brand exists, read through the event path's brand cache (brands are never deleted): a brand
 * the process has seen lately costs no query; an unknown id always asks the database.
 */
export async function requireKnownBrand(d: Pick<AgentToolPorts, 'events'>, brandId: string): Promise<void> {
  if (!(await d.events.brands.get(brandId))) throw brandNotFound(brandId);
}
