import {
  createPerkRequestSchema,
  errorEnvelopeSchema,
  listPerksQuerySchema,
  perkCatalogueParamsSchema,
  perkCatalogueQuerySchema,
  perkCatalogueResponseSchema,
  perkIdParamsSchema,
  perkResponseSchema,
  perksResponseSchema,
  updatePerkRequestSchema,
} from '@pts/shared';
import { Router } from 'express';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { parseInput } from '../../http/validate.ts';
import type { ApiDocs } from '../../observability/openapi.ts';
import { createPerk, getPerk, listCatalogue, listPerks, type PerkServiceDeps, updatePerk } from './perks.service.ts';

/** The admin perk router's dependencies: the perk service's plus the admin token. */
export type PerksAdminRouterDeps = PerkServiceDeps & { adminToken: string };

/**
 * Perk catalogue administration under `/admin` (admin bearer token): `POST /perks`, `PATCH /perks/:id`,
 * `GET /perks?brand=`, `GET /perks/:id`. Creating and updating wait for the PerkNFT transaction's receipt.
 */
export function createPerksAdminRouter(deps: PerksAdminRouterDeps): Router {
  const router = Router();
  const auth = requireAdminToken(deps.adminToken);

  router.post('/perks', auth, async (req, res) => {
    const input = parseInput(createPerkRequestSchema, req.body);
    res.status(201).json({ success: true, perk: await createPerk(deps, input) });
  });

  router.get('/perks', auth, async (req, res) => {
    const { brand } = parseInput(listPerksQuerySchema, req.query, 'query');
    res.json({ success: true, perks: await listPerks(deps, brand) });
  });

  router.get('/perks/:id', auth, async (req, res) => {
    const { id } = parseInput(perkIdParamsSchema, req.params, 'path');
    res.json({ success: true, perk: await getPerk(deps, BigInt(id)) });
  });

  router.patch('/perks/:id', auth, async (req, res) => {
    const { id } = parseInput(perkIdParamsSchema, req.params, 'path');
    const input = parseInput(updatePerkRequestSchema, req.body);
    res.json({ success: true, perk: await updatePerk(deps, BigInt(id), input) });
  });

  return router;
}

/** `GET /perks/:brandId?category=&available=` of the services router: the public catalogue. */
export function createPerkCatalogueRouter(deps: PerkServiceDeps): Router {
  const router = Router();
  router.get('/perks/:brandId', async (req, res) => {
    const { brandId } = parseInput(perkCatalogueParamsSchema, req.params, 'path');
    const query = parseInput(perkCatalogueQuerySchema, req.query, 'query');
    const perks = await listCatalogue(deps, brandId, query);
    res.json({ success: true, brandId, perks });
  });
  return router;
}

const error = (description: string) => ({ description, schema: errorEnvelopeSchema });

/** OpenAPI entries of the perk routes. */
export function registerPerkDocs(docs: ApiDocs, adminPrefix = '/admin', servicesPrefix = '/services'): void {
  docs.register({
    method: 'post',
    path: `${adminPrefix}/perks`,
    summary: 'Create a perk (a PerkNFT collection) and wait for the on-chain receipt',
    description:
      'Writes the perk `pending`, creates the collection on-chain (id = perkId), then marks it `synced`. ' +
      'Repeating a create that failed half-way (same brand and name) finishes it. maxSupply null = unlimited; ' +
      'maxPerUser 0 = unlimited (default 1); chargesPerToken default 1.',
    tags: ['perks'],
    request: { body: createPerkRequestSchema },
    responses: {
      201: { description: 'Created (or a half-done create finished)', schema: perkResponseSchema },
      400: error('Validation failed'),
      401: error('Missing or wrong admin token'),
      404: error('Unknown brand'),
      409: error('A synced perk with that name exists, or the contract refused'),
      503: error('No collection-admin key / PerkNFT address, or the chain did not answer (repeat to finish)'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'patch',
    path: `${adminPrefix}/perks/:id`,
    summary: 'Change a perk; settings that live on-chain are sent with updateCollection',
    tags: ['perks'],
    request: { params: perkIdParamsSchema, body: updatePerkRequestSchema },
    responses: {
      200: { description: 'Updated', schema: perkResponseSchema },
      400: error('Validation failed'),
      401: error('Missing or wrong admin token'),
      404: error('Unknown perk'),
      409: error('Contract refused (e.g. MaxSupplyBelowClaimed); previous values kept'),
      503: error('Chain unavailable; the perk stays pending, repeat to finish'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'get',
    path: `${adminPrefix}/perks`,
    summary: "List perks (one brand's with ?brand=)",
    tags: ['perks'],
    request: { query: listPerksQuerySchema },
    responses: {
      200: { description: 'Perks, oldest first', schema: perksResponseSchema },
      401: error('Missing or wrong admin token'),
      404: error('Unknown brand'),
    },
    security: ['adminToken'],
  });
  docs.register({
    method: 'get',
    path: `${servicesPrefix}/perks/:brandId`,
    summary: "A brand's perk catalogue with live remaining supply",
    description:
      'Synced perks only. `totalClaimed` is read from PerkNFT; `remainingSupply` is null when unlimited. ' +
      '`available=true` keeps active perks that are not sold out, `available=false` the others.',
    tags: ['perks'],
    request: { params: perkCatalogueParamsSchema, query: perkCatalogueQuerySchema },
    responses: {
      200: { description: 'Catalogue', schema: perkCatalogueResponseSchema },
      400: error('Bad brand id or query'),
      404: error('Unknown brand'),
      503: error('Chain unavailable'),
    },
  });
}
