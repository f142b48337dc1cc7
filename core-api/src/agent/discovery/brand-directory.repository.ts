import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { activeRuleCount } from '../../modules/events/rule-reads.ts';

/**
 * The brand directory the agent discovery tools read (docs/agent-api/discovery.md). A brand's category is
 * the `category` column that onboarding adds (agent-program's migration); until that column exists every
 * brand reads as uncategorised. `to_jsonb(brands) ->> 'category'` reads the column when it is there and null
 * when it is not, so this file needs no change when the migration lands.
 */
const categoryOf = sql<string | null>`to_jsonb(brands) ->> 'category'`;

export interface DirectoryBrand {
  brandId: string;
  name: string;
  domain: string;
  verifiedDomains: string[];
  category: string | null;
  automationEnabled: boolean;
  activeEvents: number;
  activePerks: number;
  createdAt: Date;
}

function directoryQuery(db: Database) {
  return db.selectFrom('brands').select([
    'brands.address',
    'brands.name',
    'brands.website_domain',
    'brands.verified_domains',
    'brands.automation_enabled',
    'brands.created_at',
    categoryOf.as('category'),
    (eb) => activeRuleCount(eb).as('active_events'),
    (eb) =>
      eb
        .selectFrom('perks')
        .select((inner) => inner.fn.countAll<string>().as('n'))
        .whereRef('perks.brand_id', '=', 'brands.address')
        .where('perks.active', '=', true)
        .where('perks.chain_status', '=', 'synced')
        .as('active_perks'),
  ]);
}

type DirectoryRow = {
  address: string;
  name: string;
  website_domain: string;
  verified_domains: string[];
  automation_enabled: boolean;
  created_at: Date;
  category: string | null;
  active_events: string | number | bigint | null;
  active_perks: string | number | bigint | null;
};

function toDirectoryBrand(row: DirectoryRow): DirectoryBrand {
  return {
    brandId: row.address,
    name: row.name,
    domain: row.website_domain,
    verifiedDomains: row.verified_domains,
    category: row.category,
    automationEnabled: row.automation_enabled,
    activeEvents: Number(row.active_events ?? 0),
    activePerks: Number(row.active_perks ?? 0),
    createdAt: new Date(row.created_at),
  };
}

/** One page of brands, oldest first, optionally of one category; `total` counts every match. */
export async function listDirectoryBrands(
  db: Database,
  filter: { category?: string | undefined; limit: number; offset: number },
): Promise<{ brands: DirectoryBrand[]; total: number }> {
  let query = directoryQuery(db);
  let count = db.selectFrom('brands').select((eb) => eb.fn.countAll<string>().as('n'));
  if (filter.category) {
    query = query.where(sql<boolean>`lower(${categoryOf}) = ${filter.category}`);
    count = count.where(sql<boolean>`lower(${categoryOf}) = ${filter.category}`);
  }
  const [rows, total] = await Promise.all([
    query.orderBy('brands.created_at').orderBy('brands.address').limit(filter.limit).offset(filter.offset).execute(),
    count.executeTakeFirstOrThrow(),
  ]);
  return { brands: rows.map(toDirectoryBrand), total: Number(total.n) };
}

/** One brand's directory entry, or undefined. */
export async function findDirectoryBrand(db: Database, brandId: string): Promise<DirectoryBrand | undefined> {
  const row = await directoryQuery(db).where('brands.address', '=', brandId.toLowerCase()).executeTakeFirst();
  return row ? toDirectoryBrand(row) : undefined;
}

/**
 * Brands a `check_brand` query may mean: by Brand ID, by name (case-insensitive, exact) or by a domain that
 * is the host or one of its parent domains (`a.shop.example.com` → `shop.example.com`, `example.com`), as
 * website domain or verified domain. The caller confirms domain matches with the CORS rule.
 */
export async function findBrandCandidates(
  db: Database,
  query: { brandId?: string | undefined; name?: string | undefined; domains: string[] },
): Promise<DirectoryBrand[]> {
  const rows = await directoryQuery(db)
    .where((eb) => {
      const ors = [];
      if (query.brandId) ors.push(eb('brands.address', '=', query.brandId));
      if (query.name) ors.push(eb(eb.fn('lower', ['brands.name']), '=', query.name.toLowerCase()));
      if (query.domains.length > 0) {
        ors.push(eb('brands.website_domain', 'in', query.domains));
        ors.push(
          sql<boolean>`exists (select 1 from jsonb_array_elements_text(brands.verified_domains) as d(domain) where d.domain in (${sql.join(query.domains)}))`,
        );
      }
      return eb.or(ors);
    })
    .orderBy('brands.created_at')
    .orderBy('brands.address')
    .limit(20)
    .execute();
  return rows.map(toDirectoryBrand);
}
