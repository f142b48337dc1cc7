import { type Brand, DETECTION_METHODS, type Rule, rateFieldsOf } from '@pts/shared';
import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { sql } from 'kysely';
import type { BrandsTable, DB, EventRulesTable } from '../../db/schema.ts';

/** A `brands` row as read. */
export type BrandRow = Selectable<BrandsTable>;
/** An `event_rules` row as read. */
export type RuleRow = Selectable<EventRulesTable>;
export type NewBrandRow = Insertable<BrandsTable>;
export type BrandRowPatch = Updateable<BrandsTable>;
export type NewRuleRow = Insertable<EventRulesTable>;

type DetectionMethod = (typeof DETECTION_METHODS)[number];

/** The brand whose Brand ID is `address` (compared lowercase). */
export function findBrandByAddress(db: Kysely<DB>, address: string): Promise<BrandRow | undefined> {
  return db.selectFrom('brands').selectAll().where('address', '=', address.toLowerCase()).executeTakeFirst();
}

/** The brand holding the security key with this SHA-256 hash. */
export function findBrandBySecurityKeyHash(db: Kysely<DB>, securityKeyHash: string): Promise<BrandRow | undefined> {
  return db.selectFrom('brands').selectAll().where('security_key_hash', '=', securityKeyHash).executeTakeFirst();
}

/** Inserts a brand; a duplicate address fails with the driver's unique violation (23505). */
export function insertBrand(db: Kysely<DB>, row: NewBrandRow): Promise<BrandRow> {
  return db.insertInto('brands').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Applies a patch; `undefined` when no brand has that address. */
export function updateBrand(db: Kysely<DB>, address: string, patch: BrandRowPatch): Promise<BrandRow | undefined> {
  return db
    .updateTable('brands')
    .set(patch)
    .where('address', '=', address.toLowerCase())
    .returningAll()
    .executeTakeFirst();
}

/** Every brand, oldest first. */
export function listBrands(db: Kysely<DB>): Promise<BrandRow[]> {
  return db.selectFrom('brands').selectAll().orderBy('created_at').orderBy('address').execute();
}

/** How many brands are listed under this category. */
export async function countBrandsInCategory(db: Kysely<DB>, category: string): Promise<number> {
  const row = await db
    .selectFrom('brands')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('category', '=', category)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Website domains and verified domains of all brands, lowercase and unique: the origins CORS may allow. */
export async function listAllBrandDomains(db: Kysely<DB>): Promise<string[]> {
  const rows = await db.selectFrom('brands').select(['website_domain', 'verified_domains']).execute();
  const domains = new Set<string>();
  for (const row of rows) {
    domains.add(row.website_domain.toLowerCase());
    for (const domain of row.verified_domains) domains.add(domain.toLowerCase());
  }
  return [...domains].sort();
}

/** The brand's rule for an event type, active or not (the caller decides what inactive means). */
export function findRuleByEventType(db: Kysely<DB>, brandId: string, eventType: string): Promise<RuleRow | undefined> {
  return db
    .selectFrom('event_rules')
    .selectAll()
    .where('brand_id', '=', brandId.toLowerCase())
    .where('event_type', '=', eventType)
    .executeTakeFirst();
}

/** The brand's rules ordered by event type; `activeOnly` leaves out deactivated ones. */
export function listRules(db: Kysely<DB>, brandId: string, options: { activeOnly: boolean }): Promise<RuleRow[]> {
  let query = db.selectFrom('event_rules').selectAll().where('brand_id', '=', brandId.toLowerCase());
  if (options.activeOnly) query = query.where('active', '=', true).where('archived_at', 'is', null);
  return query.orderBy('event_type').execute();
}

/**
 * Inserts the rule, or replaces the settings of the brand's existing rule for that event type. The
 * existing row keeps its id (the eventId callers already hold), its claim counter and its created_at.
 */
export function upsertRule(db: Kysely<DB>, row: NewRuleRow): Promise<RuleRow> {
  return db
    .insertInto('event_rules')
    .values(row)
    .onConflict((conflict) =>
      conflict.columns(['brand_id', 'event_type']).doUpdateSet((eb) => ({
        reward_amount: eb.ref('excluded.reward_amount'),
        rate: eb.ref('excluded.rate'),
        max_claims_per_user: eb.ref('excluded.max_claims_per_user'),
        max_total_claims: eb.ref('excluded.max_total_claims'),
        cooldown_hours: eb.ref('excluded.cooldown_hours'),
        detection_method: eb.ref('excluded.detection_method'),
        detection_config: eb.ref('excluded.detection_config'),
        is_custom: eb.ref('excluded.is_custom'),
        active: eb.ref('excluded.active'),
        updated_at: eb.ref('excluded.updated_at'),
        // The running total is kept only while a max total is set (it would make the rule row a hot spot
        // otherwise), so a newly set max total starts from the claims already made.
        total_claims: sql<number>`CASE
          WHEN event_rules.max_total_claims IS NULL AND excluded.max_total_claims IS NOT NULL THEN
            (SELECT COALESCE(SUM(c.claims), 0)::int FROM claim_counters c
              WHERE c.brand_id = event_rules.brand_id AND c.event_type = event_rules.event_type)
          ELSE event_rules.total_claims END`,
      })),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Inserts the rule unless the brand already has one for that event type; `undefined` when it had. */
export function insertRuleIfAbsent(db: Kysely<DB>, row: NewRuleRow): Promise<RuleRow | undefined> {
  return db
    .insertInto('event_rules')
    .values(row)
    .onConflict((conflict) => conflict.columns(['brand_id', 'event_type']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** The brand of an audit subject: a Brand ID itself, or a perk's (perk entries name the perk id). */
function brandOfSubject(action: string, subject: string | null) {
  if (subject === null) return null;
  if (/^0x[0-9a-f]{40}$/.test(subject)) return subject;
  if (action.startsWith('perk.') && /^\d{1,18}$/.test(subject)) {
    return sql<string | null>`(SELECT brand_id FROM perks WHERE id = ${BigInt(subject)})`;
  }
  return null;
}

/**
 * Appends an audit entry. Never put secrets in `details`. `brandId` is the brand the change belongs to (its
 * audit log, docs/portal.md); when absent, the subject when it is a Brand ID.
 */
export async function insertAuditEntry(
  db: Kysely<DB>,
  entry: {
    actor: string;
    action: string;
    subject: string | null;
    details: Record<string, unknown>;
    at: Date;
    brandId?: string | undefined;
  },
): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      actor: entry.actor,
      action: entry.action,
      subject: entry.subject,
      details: JSON.stringify(entry.details),
      created_at: entry.at,
      brand_id: entry.brandId?.toLowerCase() ?? brandOfSubject(entry.action, entry.subject),
    })
    .execute();
}

/**
 * Takes `domain` out of the brand's verified domains in one statement (the row lock orders it against a
 * concurrent verification). Returns the row when the domain was there, undefined otherwise.
 */
export function removeVerifiedDomain(
  db: Kysely<DB>,
  address: string,
  domain: string,
  now: Date,
): Promise<BrandRow | undefined> {
  return db
    .updateTable('brands')
    .set({ verified_domains: sql`verified_domains - ${domain}::text`, updated_at: now })
    .where('address', '=', address.toLowerCase())
    .where(sql<boolean>`verified_domains @> jsonb_build_array(${domain}::text)`)
    .returningAll()
    .executeTakeFirst();
}

/** The API view of a brand row (no key material). */
export function toBrand(row: BrandRow): Brand {
  return {
    brandId: row.address,
    name: row.name,
    domain: row.website_domain,
    verifiedDomains: row.verified_domains,
    automation: row.automation_enabled,
    unsignedEvents: row.unsigned_events,
    xHandle: row.x_handle ?? null,
    currency: row.currency,
    tier: row.tier,
    createdAt: row.created_at.toISOString(),
  };
}

/** The API view of a rule row; int8 amounts become numbers (rewards are bounded far below 2^53). */
export function toRule(row: RuleRow): Rule {
  return {
    eventId: row.id,
    brandId: row.brand_id,
    eventType: row.event_type,
    rewardAmount: Number(row.reward_amount),
    ...rateFieldsOf(row.rate),
    cooldownHours: row.cooldown_hours,
    maxClaims: row.max_claims_per_user,
    maxTotal: row.max_total_claims,
    totalClaims: row.max_total_claims === null ? null : row.total_claims,
    detectionMethod: toDetectionMethod(row.detection_method),
    detectionConfig: row.detection_config,
    isCustom: row.is_custom,
    active: row.active,
    ...(row.archived_at ? { archivedAt: new Date(row.archived_at).toISOString() } : {}),
  };
}

function toDetectionMethod(value: string): DetectionMethod {
  // Rows are only written through ruleInputSchema; an unknown value means someone edited the table by hand.
  return (DETECTION_METHODS as readonly string[]).includes(value) ? (value as DetectionMethod) : 'manual';
}
