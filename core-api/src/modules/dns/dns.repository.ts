import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';

/** The brand columns DNS verification reads. */
export interface DnsBrandRecord {
  address: string;
  website_domain: string;
  api_key_hash: string;
  verified_domains: string[];
}

/** The brand whose Brand ID (lowercase address) is `address`, if any. */
export async function findBrandForDns(db: Kysely<DB>, address: string): Promise<DnsBrandRecord | undefined> {
  return db
    .selectFrom('brands')
    .select(['address', 'website_domain', 'api_key_hash', 'verified_domains'])
    .where('address', '=', address)
    .executeTakeFirst();
}

/**
 * Appends `domain` to the brand's verified domains unless it is already there. One statement, so two
 * concurrent verifications cannot both append (the second re-checks the condition on the locked row).
 * Returns whether the list changed.
 */
export async function addVerifiedDomain(db: Kysely<DB>, address: string, domain: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('brands')
    .set({
      verified_domains: sql`verified_domains || jsonb_build_array(${domain}::text)`,
      updated_at: now,
    })
    .where('address', '=', address)
    .where(sql<boolean>`NOT (verified_domains @> jsonb_build_array(${domain}::text))`)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
