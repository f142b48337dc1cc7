import { AppError, type OperatorBrand } from '@pts/shared';
import { readMemberCountsByBrand } from '../analytics/brand-analytics.ts';
import { listBrands } from '../brands/brands.service.ts';
import type { PortalUser } from './portal-auth.service.ts';
import { type PortalTeamDeps, readTeamCountsByBrand } from './portal-team.service.ts';

// The platform operators' view of the portal (docs/portal.md, "Operators"): every brand with its members (the
// dashboard's own count) and its team's state. Creating a brand and inviting its owner call the brands
// service and the team service directly (portal-operator.routes.ts), as the admin API and the CLI do.

/** Who the audit log names for an operator's change in the portal. */
export const operatorActorOf = (user: PortalUser) => `operator:${user.email}`;

/** 403 unless the portal user is a platform operator. */
export function requireOperator(user: PortalUser): void {
  if (!user.operator) {
    throw new AppError('FORBIDDEN', 'Only platform operators can do this (pts portal invite --operator makes one)');
  }
}

/** Every brand, oldest first, with its loyalty members and portal team. */
export async function listOperatorBrands(deps: Pick<PortalTeamDeps, 'db' | 'clock'>): Promise<OperatorBrand[]> {
  const now = deps.clock.now();
  const [brands, members, teams] = await Promise.all([
    listBrands(deps),
    readMemberCountsByBrand(deps.db, { from: now, to: now, endsNow: true }),
    readTeamCountsByBrand(deps),
  ]);
  return brands.map((brand) => {
    const counts = members.get(brand.brandId);
    const team = teams.get(brand.brandId) ?? { owners: 0, members: 0, pendingOwnerInvites: 0 };
    return {
      ...brand,
      members: { total: counts?.total ?? 0, activeMonth: counts?.active.month ?? 0 },
      team,
      status: team.owners > 0 ? 'active' : team.pendingOwnerInvites > 0 ? 'invited' : 'no_owner',
    };
  });
}

/** The operators' page's reads (docs/portal.md, "Operators"). */
export interface PortalOperatorService {
  /** Every brand, oldest first, with its loyalty members and portal team. */
  listBrands(): Promise<OperatorBrand[]>;
}

export function createPortalOperatorService(deps: Pick<PortalTeamDeps, 'db' | 'clock'>): PortalOperatorService {
  return { listBrands: () => listOperatorBrands(deps) };
}
