import type {
  Brand,
  CreateBrandInput,
  CreatedBrand,
  RotatedBrandKeys,
  Rule,
  RuleSettings,
  UpdateBrandInput,
} from '@pts/shared';
import { rotateBrandKeys } from './brand-keys.service.ts';
import {
  type BrandServiceDeps,
  createBrand,
  getBrand,
  listBrands,
  listRules,
  removeBrandDomain,
  setRule,
  updateBrand,
} from './brands.service.ts';

/**
 * Brand and rule administration (the admin API under `/admin/brands`, `pts brand …`): every change audited as
 * the deps' actor (`admin` when absent) and announced to every cache.
 */
export interface BrandAdminService {
  /** A new brand with the spec 2.4 default rules; its keys are returned this once. */
  create(input: CreateBrandInput): Promise<CreatedBrand>;
  list(): Promise<Brand[]>;
  get(brandId: string): Promise<Brand>;
  update(brandId: string, input: UpdateBrandInput): Promise<Brand>;
  removeDomain(brandId: string, domain: string): Promise<Brand>;
  setRule(brandId: string, input: RuleSettings): Promise<Rule>;
  /** The brand's rules, active or not. */
  rules(brandId: string): Promise<Rule[]>;
  /** New security and API keys, returned this once; the replaced security key verifies for `graceMinutes`. */
  rotateKeys(brandId: string, options: { graceMinutes?: number | undefined }): Promise<RotatedBrandKeys>;
}

export function createBrandAdminService(deps: BrandServiceDeps): BrandAdminService {
  return {
    create: (input) => createBrand(deps, input, { withDefaultRules: true }),
    list: () => listBrands(deps),
    get: (brandId) => getBrand(deps, brandId),
    update: (brandId, input) => updateBrand(deps, brandId, input),
    removeDomain: (brandId, domain) => removeBrandDomain(deps, brandId, domain),
    setRule: (brandId, input) => setRule(deps, brandId, input),
    rules: (brandId) => listRules(deps, brandId),
    rotateKeys: (brandId, options) => rotateBrandKeys(deps, brandId, options),
  };
}
