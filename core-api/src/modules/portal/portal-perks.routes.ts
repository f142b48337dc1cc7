import {
  addConstraintRequestSchema,
  type Clock,
  type Perk,
  type PortalPerk,
  perkConstraintResponseSchema,
  perkResponseSchema,
  perkStatusAt,
  portalBrandParamsSchema,
  portalCreatePerkRequestSchema,
  portalPerkConstraintParamsSchema,
  portalPerkDetailSchema,
  portalPerkParamsSchema,
  portalPerksResponseSchema,
  updatePerkRequestSchema,
} from '@pts/shared';
import { z } from 'zod';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { ConstraintService } from '../perks/constraints/constraints.service.ts';
import type { PerkService } from '../perks/perks.service.ts';
import { actorOf as portalActorOf } from './portal.routes.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import { portalUserOf, requireBrandRole, requireSession } from './portal-session.ts';
import type { PortalTeamService } from './portal-team.service.ts';

export interface PortalPerkRoutesDeps {
  auth: PortalAuthService;
  team: PortalTeamService;
  perks: PerkService;
  constraints: ConstraintService;
  /** The PerkNFT contract collections live in (shown on a perk's page); absent when not configured. */
  perkNftAddress: string | undefined;
  /** The server's clock: a perk's status (scheduled, ended) is the server's, not the browser's. */
  clock: Clock;
}

/**
 * The perks with their status by the shared rule at the server's clock, claimed counts read once for the
 * brand from PerkNFT (the public catalogue's read). When the chain does not answer, the counts are unknown
 * (`totalClaimed` null) and supply is left out of the status rather than failing the page.
 */
async function withStatus(deps: PortalPerkRoutesDeps, brandId: string, list: Perk[]): Promise<PortalPerk[]> {
  let claimed = new Map<number, number>();
  if (list.some((perk) => perk.chainStatus === 'synced')) {
    claimed = await deps.perks.catalogue(brandId).then(
      (items) => new Map(items.map((item) => [item.id, item.totalClaimed])),
      () => new Map(),
    );
  }
  const now = deps.clock.now();
  return list.map((perk) => {
    const totalClaimed = claimed.get(perk.perkId) ?? null;
    const terms = { ...perk, onChain: perk.chainStatus === 'synced' };
    const status = perkStatusAt(totalClaimed === null ? { ...terms, maxSupply: null } : terms, totalClaimed ?? 0, now);
    return { ...perk, status, totalClaimed };
  });
}

const session: ['portalSession'] = ['portalSession'];
const signedOut = failure('Not signed in (no session, or it ended)');
const csrfOrRole = failure('Missing CSRF token, or the role cannot make this change');
const notFound = failure('No such brand among yours, or no such perk in it');

/**
 * The portal's Perks page (docs/portal.md): the brand's perks, one perk with its collection, eligibility
 * constraints and redemptions, and changes (admin or owner) through the perk service the admin API, the CLI
 * and the agent API use. A perk of another brand answers 404, as an unknown one.
 */
export function portalPerkRoutes(deps: PortalPerkRoutesDeps): Route[] {
  const { team, perks, constraints } = deps;
  const signedIn = [requireSession(deps.auth)];
  /** A change by an admin or owner: a viewer is refused before the body is read. */
  const asAdmin = [...signedIn, requireBrandRole(team, 'admin')];

  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/perks',
      summary: "The brand's perks, oldest first",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: { 200: { description: 'Perks', schema: portalPerksResponseSchema }, 401: signedOut, 404: notFound },
      handle: async ({ params: { brandId }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        return { success: true, perks: await withStatus(deps, brandId, await perks.list(brandId)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/perks',
      summary: 'Create a perk (admin or owner): the same service as `POST /admin/perks` and `pts perk create`',
      description:
        'Waits for the PerkNFT collection to be created on chain. maxSupply null = unlimited; maxPerUser 0 = unlimited.',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalBrandParamsSchema, body: portalCreatePerkRequestSchema },
      responses: {
        201: { description: 'Created', schema: perkResponseSchema },
        400: failure('Validation failed'),
        401: signedOut,
        403: csrfOrRole,
        404: notFound,
        409: failure('The brand has a perk with that name'),
        503: failure('The chain did not answer (repeat to finish)'),
      },
      handle: async ({ params: { brandId }, body, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        const perk = await perks.create({ ...body, brandId }, { actor: portalActorOf(user) });
        res.status(201);
        return { success: true, perk };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/perks/:perkId',
      summary: 'One perk: its on-chain collection, eligibility constraints and latest redemptions',
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalPerkParamsSchema },
      responses: { 200: { description: 'Perk', schema: portalPerkDetailSchema }, 401: signedOut, 404: notFound },
      handle: async ({ params: { brandId, perkId }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        // Another brand's perk answers 404 before anything of it is read.
        const perk = await perks.get(BigInt(perkId), { brandId });
        const [perkConstraints, redemptions] = await Promise.all([
          constraints.list(BigInt(perkId)),
          perks.redemptions(brandId, BigInt(perkId)),
        ]);
        const [shown] = await withStatus(deps, brandId, [perk]);
        return {
          success: true,
          perk: shown,
          collection: { contractAddress: deps.perkNftAddress ?? null, collectionId: perk.perkId },
          constraints: perkConstraints,
          redemptions,
        };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/brands/:brandId/perks/:perkId',
      summary: 'Change a perk (admin or owner): the same service as `PATCH /admin/perks/:id`',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalPerkParamsSchema, body: updatePerkRequestSchema },
      responses: {
        200: { description: 'Changed', schema: perkResponseSchema },
        400: failure('Validation failed'),
        401: signedOut,
        403: csrfOrRole,
        404: notFound,
        409: failure('The contract refused (e.g. supply below what is claimed); nothing changed'),
        503: failure('The chain did not answer; the perk stays pending, repeat to finish'),
      },
      handle: async ({ params: { brandId, perkId }, body, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        return {
          success: true,
          perk: await perks.update(BigInt(perkId), body, { actor: portalActorOf(user), brandId }),
        };
      },
    }),
    ...(['archive', 'restore'] as const).map((change) =>
      defineRoute({
        method: 'post',
        path: `/brands/:brandId/perks/:perkId/${change}`,
        summary:
          change === 'archive'
            ? 'Archive a perk (admin or owner): out of every catalogue, the bots and the agent; redemptions refused'
            : 'Restore an archived perk (admin or owner): it comes back inactive; activate it to offer it again',
        description: `Audited as \`perk.${change}\`.`,
        tags: ['portal'],
        security: session,
        before: signedIn,
        request: { params: portalPerkParamsSchema },
        responses: {
          200: { description: change === 'archive' ? 'Archived' : 'Restored', schema: perkResponseSchema },
          400: failure('Validation failed'),
          401: signedOut,
          403: csrfOrRole,
          404: notFound,
          409: failure(change === 'archive' ? 'Already archived' : 'Not archived'),
          503: failure('The chain did not answer while switching the perk off; repeat to finish'),
        },
        handle: async ({ params: { brandId, perkId }, res }) => {
          const user = portalUserOf(res);
          await team.requireRole(user.id, brandId, 'admin');
          return {
            success: true as const,
            perk: await perks.archive(BigInt(perkId), change === 'archive', { actor: portalActorOf(user), brandId }),
          };
        },
      }),
    ),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/perks/:perkId/constraints',
      summary: 'Add an eligibility constraint to a perk (admin or owner)',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalPerkParamsSchema, body: addConstraintRequestSchema },
      responses: {
        201: { description: 'Added', schema: perkConstraintResponseSchema },
        400: failure('Validation failed (or a URL the platform may not call)'),
        401: signedOut,
        403: csrfOrRole,
        404: notFound,
      },
      handle: async ({ params: { brandId, perkId }, body, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        const constraint = await constraints.add(BigInt(perkId), body, { actor: portalActorOf(user), brandId });
        res.status(201);
        return { success: true, constraint };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/brands/:brandId/perks/:perkId/constraints/:constraintId',
      summary: 'Remove an eligibility constraint (admin or owner)',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalPerkConstraintParamsSchema },
      responses: {
        200: { description: 'Removed', schema: z.object({ success: z.literal(true) }) },
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, perk or constraint'),
      },
      handle: async ({ params: { brandId, perkId, constraintId }, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        await constraints.remove(BigInt(perkId), constraintId, { actor: portalActorOf(user), brandId });
        return { success: true };
      },
    }),
  ];
}
