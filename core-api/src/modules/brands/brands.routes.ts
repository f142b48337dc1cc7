import {
  brandIdParamsSchema,
  createBrandRequestSchema,
  ruleParamsSchema,
  setRuleRequestSchema,
  updateBrandRequestSchema,
} from '@pts/shared';
import { Router } from 'express';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { parseInput } from '../../http/validate.ts';
import {
  type BrandServiceDeps,
  createBrand,
  getBrand,
  listBrands,
  listRules,
  setRule,
  updateBrand,
} from './brands.service.ts';

/** What the admin router needs: the brands service's dependencies plus the admin token it checks. */
export type AdminRouterDeps = BrandServiceDeps & { adminToken: string };

/**
 * Brand and rule administration, mounted at `/admin`. Every route requires the admin bearer token; bodies
 * arrive already parsed by the app's JSON middleware. Responses: `{ success, brand | brands | rule | rules }`.
 */
export function createAdminRouter(deps: AdminRouterDeps): Router {
  const router = Router();
  router.use(requireAdminToken(deps.adminToken));

  // A new brand starts with the spec 2.4 default rules, so it can receive events right away.
  router.post('/brands', async (req, res) => {
    const input = parseInput(createBrandRequestSchema, req.body);
    const brand = await createBrand(deps, input, { withDefaultRules: true });
    res.status(201).json({ success: true, brand });
  });

  router.get('/brands', async (_req, res) => {
    res.json({ success: true, brands: await listBrands(deps) });
  });

  router.get('/brands/:brandId', async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    res.json({ success: true, brand: await getBrand(deps, brandId) });
  });

  router.patch('/brands/:brandId', async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    const input = parseInput(updateBrandRequestSchema, req.body);
    res.json({ success: true, brand: await updateBrand(deps, brandId, input) });
  });

  router.put('/brands/:brandId/rules/:eventType', async (req, res) => {
    const { brandId, eventType } = parseInput(ruleParamsSchema, req.params, 'path');
    const settings = parseInput(setRuleRequestSchema, req.body);
    res.json({ success: true, rule: await setRule(deps, brandId, { ...settings, eventType }) });
  });

  router.get('/brands/:brandId/rules', async (req, res) => {
    const { brandId } = parseInput(brandIdParamsSchema, req.params, 'path');
    res.json({ success: true, rules: await listRules(deps, brandId) });
  });

  return router;
}
