import type {
  AuditPage,
  AuditQuery,
  Brand,
  BrandKeyStatus,
  CreateBrandInput,
  CreatedBrand,
  EndedPreviousBrandKey,
  RotatedBrandKeys,
  Rule,
  RuleSettings,
  UpdateBrandInput,
} from '@pts/shared';
import { listAuditEntries } from './audit-log.ts';
import { endPreviousBrandKey, getBrandKeyStatus, rotateBrandKeys } from './brand-keys.service.ts';
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

/** Who the audit log names for one change: a portal user (`portal:<email>`, `operator:<email>`); the deps' actor when absent. */
export type BrandActor = { actor?: string | undefined };

/**
 * Brand and rule administration (the admin API under `/admin/brands`, `pts brand …`, and the brand portal's
 * brand pages): every change audited as the call's actor, else the deps' actor (`admin` when absent), and
 * announced to every cache.
 */
export interface BrandAdminService {
  /** A new brand with the spec 2.4 default rules; its keys are returned this once. */
  create(input: CreateBrandInput, options?: BrandActor): Promise<CreatedBrand>;
  list(): Promise<Brand[]>;
  get(brandId: string): Promise<Brand>;
  update(brandId: string, input: UpdateBrandInput, options?: BrandActor): Promise<Brand>;
  /** Takes a domain out of the brand's verified domains. */
  removeDomain(brandId: string, domain: string, options?: BrandActor): Promise<Brand>;
  setRule(brandId: string, input: RuleSettings, options?: BrandActor): Promise<Rule>;
  /** The brand's rules, active or not. */
  rules(brandId: string): Promise<Rule[]>;
  /** The brand's security and API key status (never the keys). */
  keyStatus(brandId: string): Promise<BrandKeyStatus>;
  /** New security and API keys, returned this once; the replaced security key verifies for `graceMinutes`. */
  rotateKeys(
    brandId: string,
    options: { graceMinutes?: number | undefined },
    by?: BrandActor,
  ): Promise<RotatedBrandKeys>;
  /** Ends the grace of the security key the last rotation replaced (409 when none is still verifying). */
  endPreviousKey(brandId: string, by?: BrandActor): Promise<EndedPreviousBrandKey>;
  /** The brand's audit log, newest first, filtered and paged. */
  audit(brandId: string, query: AuditQuery): Promise<AuditPage>;
}

export function createBrandAdminService(deps: BrandServiceDeps): BrandAdminService {
  const as = (options: BrandActor = {}): BrandServiceDeps =>
    options.actor === undefined ? deps : { ...deps, actor: options.actor };
  return {
    create: (input, options) => createBrand(as(options), input, { withDefaultRules: true }),
    list: () => listBrands(deps),
    get: (brandId) => getBrand(deps, brandId),
    update: (brandId, input, options) => updateBrand(as(options), brandId, input),
    removeDomain: (brandId, domain, options) => removeBrandDomain(as(options), brandId, domain),
    setRule: (brandId, input, options) => setRule(as(options), brandId, input),
    rules: (brandId) => listRules(deps, brandId),
    keyStatus: (brandId) => getBrandKeyStatus(deps, brandId),
    rotateKeys: (brandId, options, by) => rotateBrandKeys(as(by), brandId, options),
    endPreviousKey: (brandId, by) => endPreviousBrandKey(as(by), brandId),
    audit: (brandId, query) => listAuditEntries(deps.db, brandId, query),
  };
}
