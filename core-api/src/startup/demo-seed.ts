import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findBrandByAddress } from '../modules/brands/brands.repository.ts';
import { type BrandServiceDeps, createBrand, seedDefaultRules } from '../modules/brands/brands.service.ts';

export interface DemoBrand {
  brandId: string;
  securityKey: string;
  apiKey: string;
  created: boolean;
}

const DEMO_FILE = 'demo-brand.json';

/**
 * Creates the demo brand (domain `localhost`, the spec's default event types) on first start and remembers
 * its keys in the data dir so later starts can print them again. Local development only.
 */
export async function ensureDemoBrand(deps: BrandServiceDeps, dataDir: string): Promise<DemoBrand> {
  const file = join(dataDir, DEMO_FILE);
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Omit<DemoBrand, 'created'>;
    if (await findBrandByAddress(deps.db, saved.brandId)) return { ...saved, created: false };
  }
  const brand = await createBrand(deps, { name: 'Demo Brand', domain: 'localhost' });
  await seedDefaultRules(deps, brand.brandId);
  const demo = { brandId: brand.brandId, securityKey: brand.securityKey, apiKey: brand.apiKey };
  writeFileSync(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  return { ...demo, created: true };
}
