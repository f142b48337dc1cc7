import type { AgentKey } from '@pts/shared';
import type { BrandAnalyticsService } from '../analytics/brand-analytics.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import type { PortalOperatorService } from './portal-operator.service.ts';
import type { PortalTeamService } from './portal-team.service.ts';

// The portal's own services. The modules' operations its pages call (brands, members, perks, drops, …) are the
// modules' own service objects, the same the admin API and the brand-signed services use (compose.ts builds each
// once; app.ts hands them to the portal's routers): a portal change passes `actor` (`portal:<email>`,
// `operator:<email>`) for the audit log, and `brandId` where an id must belong to the brand (404 otherwise).

/**
 * What an agent key does in the portal: agent/keys/agent-keys.service.ts's functions, bound by the composition
 * root (a module does not import the agent layer). `actor` names the portal user in the audit log; `brandId`
 * scopes a revoke.
 */
export interface PortalAgentKeyService {
  create(
    actor: string,
    input: { name: string; brandIds: string[]; canManageProgram: boolean },
  ): Promise<{ keyId: string; secret: string }>;
  list(brandId: string): Promise<AgentKey[]>;
  revoke(actor: string, keyId: string, brandId: string): Promise<{ revoked: boolean }>;
}

/** The brand portal's own services (compose.ts `composePortalServices` builds each once). */
export interface PortalServices {
  /** Sign-in, sessions, passwords, invite and reset links. */
  auth: PortalAuthService;
  /** Roles, invites, the team, the operator flag. */
  team: PortalTeamService;
  /** The operators' brand list. */
  operators: PortalOperatorService;
  /** The dashboard's read model (the agent's `get_brand_dashboard` reads the same). */
  analytics: BrandAnalyticsService;
  agentKeys: PortalAgentKeyService;
}
