import {
  createPerkRequestSchema,
  listPerksQuerySchema,
  perkCatalogueParamsSchema,
  perkCatalogueQuerySchema,
  perkCatalogueResponseSchema,
  perkIdParamsSchema,
  perkResponseSchema,
  perksResponseSchema,
  updatePerkRequestSchema,
} from '@pts/shared';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { PerkService } from './perks.service.ts';

/** The admin perk router's dependencies: the perk service and the admin token. */
export type PerksAdminRouterDeps = { perks: PerkService; adminToken: string };

const adminOnly: ['adminToken'] = ['adminToken'];
const unauthorized = failure('Missing or wrong admin token');

/**
 * Perk catalogue administration under `/admin` (admin bearer token; the admin router reads the body):
 * `POST /perks`, `PATCH /perks/:id`, `GET /perks?brand=`, `GET /perks/:id`. Creating and updating wait for the
 * PerkNFT transaction's receipt.
 */
export function perkAdminRoutes(deps: PerksAdminRouterDeps): Route[] {
  const before = [requireAdminToken(deps.adminToken)];
  return [
    defineRoute({
      method: 'post',
      path: '/perks',
      summary: 'Create a perk (a PerkNFT collection) and wait for the on-chain receipt',
      description:
        'Writes the perk `pending`, creates the collection on-chain (id = perkId), then marks it `synced`. ' +
        'Repeating a create that failed half-way (same brand and name) finishes it. maxSupply null = unlimited; ' +
        'maxPerUser 0 = unlimited (default 1); chargesPerToken default 1.',
      tags: ['perks'],
      security: adminOnly,
      before,
      request: { body: createPerkRequestSchema, bodyReader: 'own' },
      responses: {
        201: { description: 'Created (or a half-done create finished)', schema: perkResponseSchema },
        400: failure('Validation failed'),
        401: unauthorized,
        404: failure('Unknown brand'),
        409: failure('A synced perk with that name exists, or the contract refused'),
        503: failure('No collection-admin key / PerkNFT address, or the chain did not answer (repeat to finish)'),
      },
      handle: async ({ body, res }) => {
        const perk = await deps.perks.create(body);
        res.status(201);
        return { success: true, perk };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/perks',
      summary: "List perks (one brand's with ?brand=)",
      tags: ['perks'],
      security: adminOnly,
      before,
      request: { query: listPerksQuerySchema },
      responses: {
        200: { description: 'Perks, oldest first', schema: perksResponseSchema },
        401: unauthorized,
        404: failure('Unknown brand'),
      },
      handle: async ({ query: { brand } }) => ({ success: true, perks: await deps.perks.list(brand) }),
    }),
    defineRoute({
      method: 'get',
      path: '/perks/:id',
      summary: 'One perk',
      tags: ['perks'],
      security: adminOnly,
      before,
      request: { params: perkIdParamsSchema },
      responses: {
        200: { description: 'The perk', schema: perkResponseSchema },
        401: unauthorized,
        404: failure('Unknown perk'),
      },
      handle: async ({ params: { id } }) => ({ success: true, perk: await deps.perks.get(BigInt(id)) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/perks/:id',
      summary: 'Change a perk; settings that live on-chain are sent with updateCollection',
      tags: ['perks'],
      security: adminOnly,
      before,
      request: { params: perkIdParamsSchema, body: updatePerkRequestSchema, bodyReader: 'own' },
      responses: {
        200: { description: 'Updated', schema: perkResponseSchema },
        400: failure('Validation failed'),
        401: unauthorized,
        404: failure('Unknown perk'),
        409: failure('Contract refused (e.g. MaxSupplyBelowClaimed); previous values kept'),
        503: failure('Chain unavailable; the perk stays pending, repeat to finish'),
      },
      handle: async ({ params: { id }, body }) => ({ success: true, perk: await deps.perks.update(BigInt(id), body) }),
    }),
    ...(['archive', 'restore'] as const).map((change) =>
      defineRoute({
        method: 'post',
        path: `/perks/:id/${change}`,
        summary:
          change === 'archive'
            ? 'Archive a perk: out of every catalogue; redemptions refused (reason archived)'
            : 'Restore an archived perk: it comes back inactive',
        tags: ['perks'],
        security: adminOnly,
        before,
        request: { params: perkIdParamsSchema },
        responses: {
          200: { description: change === 'archive' ? 'Archived' : 'Restored', schema: perkResponseSchema },
          400: failure('Validation failed'),
          401: unauthorized,
          404: failure('Unknown perk'),
          409: failure(change === 'archive' ? 'Already archived' : 'Not archived'),
          503: failure('Chain unavailable while switching the perk off; repeat to finish'),
        },
        handle: async ({ params: { id } }) => ({
          success: true as const,
          perk: await deps.perks.archive(BigInt(id), change === 'archive'),
        }),
      }),
    ),
  ];
}

/** `GET /perks/:brandId?category=&available=` of the services router: the public catalogue. */
export function perkCatalogueRoutes(deps: { perks: PerkService }): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/perks/:brandId',
      summary: "A brand's perk catalogue with live remaining supply",
      description:
        'Synced perks only. `totalClaimed` is read from PerkNFT; `remainingSupply` is null when unlimited. ' +
        '`available=true` keeps active perks that are not sold out, `available=false` the others.',
      tags: ['perks'],
      request: { params: perkCatalogueParamsSchema, query: perkCatalogueQuerySchema },
      responses: {
        200: { description: 'Catalogue', schema: perkCatalogueResponseSchema },
        400: failure('Bad brand id or query'),
        404: failure('Unknown brand'),
        503: failure('Chain unavailable'),
      },
      handle: async ({ params: { brandId }, query }) => ({
        success: true,
        brandId,
        perks: await deps.perks.catalogue(brandId, query),
      }),
    }),
  ];
}
