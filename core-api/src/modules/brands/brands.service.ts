import { randomBytes, randomUUID } from 'node:crypto';
import type { StoredRateTerms } from '@pts/shared';
import {
  AppError,
  type Brand,
  type Clock,
  type CreateBrandInput,
  type CreatedBrand,
  type Rule,
  type RuleSettings,
  type UpdateBrandInput,
} from '@pts/shared';
import type { Kysely } from 'kysely';
import { zeroAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { isUniqueViolation } from '../../db/errors.ts';
import { inTransaction } from '../../db/in-transaction.ts';
import type { DB, DetectionConfig } from '../../db/schema.ts';
import { generateSecret, hashSecret, type SecretBox } from '../../security/secret-box.ts';
import type { ChangeNotifier } from './brand-changes.ts';
import {
  type BrandRowPatch,
  findBrandByAddress,
  insertAuditEntry,
  insertBrand,
  insertRuleIfAbsent,
  listBrands as listBrandRows,
  listRules as listRuleRows,
  type NewRuleRow,
  removeVerifiedDomain as removeVerifiedDomainRow,
  toBrand,
  toRule,
  updateBrand as updateBrandRow,
  upsertRule,
} from './brands.repository.ts';

/** What the brands service writes with. `changes` hears about every committed mutation. */
export interface BrandServiceDeps {
  db: Kysely<DB>;
  secrets: SecretBox;
  clock: Clock;
  changes?: ChangeNotifier | undefined;
  /** Cooldown of rules that do not set one (config `PTS_DEFAULT_COOLDOWN_HOURS`); 24 when absent. */
  defaultCooldownHours?: number | undefined;
  /** Who the audit log names as the actor; `admin` when absent. */
  actor?: string | undefined;
}

/** Reads need the database only. */
export type BrandReadDeps = Pick<BrandServiceDeps, 'db'>;

/** Default rewards per event type (spec 2.4), created for a new brand. */
export const DEFAULT_EVENT_REWARDS: Readonly<Record<string, number>> = {
  account_creation: 100,
  complete_survey: 75,
  newsletter_subscribe: 25,
  rate_experience: 50,
  subscribe_renewal: 200,
  form_submit: 10,
};

/**
 * The X bot's rules (spec 4.4), created when a brand first gets an X handle, for the event types it lacks.
 * Quotes: 75, 24 h cooldown, 10 per user (the spec's example); thread replies 20. Mentions and replies
 * have a 1 h cooldown against reply storms; hashtag posts are bounded by their campaign; the daily
 * engagement is once per user and UTC day by its externalId. Likes and reposts need an elevated X tier
 * and are left to the operator (`pts rule set`).
 */
export const X_DEFAULT_RULES: readonly RuleSettings[] = [
  { eventType: 'post_mention', rewardAmount: 10, cooldownHours: 1, maxClaims: -1 },
  { eventType: 'post_reply', rewardAmount: 15, cooldownHours: 1, maxClaims: -1 },
  { eventType: 'post_quote', rewardAmount: 75, cooldownHours: 24, maxClaims: 10 },
  { eventType: 'post_thread_reply', rewardAmount: 20, cooldownHours: 1, maxClaims: -1 },
  { eventType: 'post_hashtag', rewardAmount: 50, cooldownHours: 0, maxClaims: -1 },
  { eventType: 'social_daily_engagement', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 },
];

const DEFAULT_COOLDOWN_HOURS = 24;
const DEFAULT_MAX_CLAIMS = 1;
/**
 * Custom events have ids starting with `custom_` (spec 2.3). A rule is custom when its event type is not one
 * of the spec 2.4 defaults; a `custom_…` event type is its own id, any other custom rule gets
 * `custom_<16 hex>` (seed clients send these ids where an event type is expected: docs/compatibility.md).
 */
const CUSTOM_EVENT_PREFIX = 'custom_';

/** The stored id and custom flag of a new rule for `eventType`. */
export function newRuleIdentity(eventType: string): { id: string; isCustom: boolean } {
  if (eventType.startsWith(CUSTOM_EVENT_PREFIX)) return { id: eventType, isCustom: true };
  if (Object.hasOwn(DEFAULT_EVENT_REWARDS, eventType)) return { id: randomUUID(), isCustom: false };
  return { id: `${CUSTOM_EVENT_PREFIX}${randomBytes(8).toString('hex')}`, isCustom: true };
}
const SECURITY_KEY_PREFIX = 'pts_sk_';
const API_KEY_PREFIX = 'pts_ak_';

/**
 * Creates a brand with fresh keys. The address is the given one, or the address of a random private key
 * that is not kept (the brand wallet is only an identifier here). The security key is stored hashed (to
 * recognise it when presented) and encrypted (HMAC verification needs the key itself); the API key only
 * hashed. Both are returned once. `withDefaultRules` also creates the spec 2.4 default rules.
 */
export async function createBrand(
  deps: BrandServiceDeps,
  input: CreateBrandInput,
  options: { withDefaultRules?: boolean } = {},
): Promise<CreatedBrand> {
  const address = (input.address ?? privateKeyToAccount(generatePrivateKey()).address).toLowerCase();
  if (address === zeroAddress) {
    // The platform ledger (events.service.ts PLATFORM_LEDGER_ID): rewards the network pays, under no brand.
    throw new AppError(
      'VALIDATION_ERROR',
      'The zero address is reserved for the platform ledger; choose another Brand ID',
      {
        field: 'address',
        value: address,
      },
    );
  }
  const securityKey = generateSecret(SECURITY_KEY_PREFIX);
  const apiKey = generateSecret(API_KEY_PREFIX);
  const now = deps.clock.now();
  const { row, seeded } = await inTransaction(deps.db, async (trx) => {
    const row = await insertBrand(trx, {
      address,
      name: input.name,
      website_domain: input.domain,
      verified_domains: JSON.stringify([]),
      automation_enabled: input.automation ?? true,
      security_key_hash: hashSecret(securityKey),
      security_key_encrypted: deps.secrets.encrypt(securityKey),
      api_key_hash: hashSecret(apiKey),
      created_at: now,
      updated_at: now,
    }).catch((error: unknown) => {
      // The address is the primary key; the key hashes are unique too, but 256-bit random keys do not collide.
      throw isUniqueViolation(error) ? brandExists(address) : error;
    });
    const seeded = options.withDefaultRules ? await insertDefaultRules(trx, deps, address, now) : [];
    await insertAuditEntry(trx, {
      actor: actorOf(deps),
      action: 'brand.create',
      subject: address,
      details: {
        name: input.name,
        domain: input.domain,
        automation: row.automation_enabled,
        addressDerived: input.address === undefined,
        defaultRules: seeded.map((rule) => rule.eventType),
      },
      at: now,
    });
    return { row, seeded };
  });
  deps.changes?.emit({ kind: 'brand', brandId: address });
  if (seeded.length > 0) deps.changes?.emit({ kind: 'rules', brandId: address });
  return { ...toBrand(row), securityKey, apiKey };
}

/** The brand, or BRAND_NOT_FOUND. */
export async function getBrand(deps: BrandReadDeps, brandId: string): Promise<Brand> {
  const row = await findBrandByAddress(deps.db, brandId);
  if (!row) throw brandNotFound(brandId);
  return toBrand(row);
}

/** Throws 404 BRAND_NOT_FOUND unless the brand exists. */
export async function requireBrandExists(db: Kysely<DB>, brandId: string): Promise<void> {
  if (!(await findBrandByAddress(db, brandId))) throw brandNotFound(brandId);
}

/** Every brand, oldest first. */
export async function listBrands(deps: BrandReadDeps): Promise<Brand[]> {
  return (await listBrandRows(deps.db)).map(toBrand);
}

/** Changes a brand's name, website domain, automation or unsigned-events switch; at least one must be given. */
export async function updateBrand(deps: BrandServiceDeps, brandId: string, input: UpdateBrandInput): Promise<Brand> {
  const patch: BrandRowPatch = {};
  if (input.name !== undefined) patch.name = input.name;
  if (input.domain !== undefined) patch.website_domain = input.domain;
  if (input.automation !== undefined) patch.automation_enabled = input.automation;
  if (input.unsignedEvents !== undefined) patch.unsigned_events = input.unsignedEvents;
  if (input.xHandle !== undefined) patch.x_handle = input.xHandle;
  if (input.currency !== undefined) patch.currency = input.currency;
  if (Object.keys(patch).length === 0) {
    throw new AppError(
      'VALIDATION_ERROR',
      'Nothing to update: give at least one of name, domain, automation, unsignedEvents, xHandle, currency',
      { errors: ['at least one of name, domain, automation, unsignedEvents, xHandle, currency is required'] },
    );
  }
  const now = deps.clock.now();
  const { row, xRules } = await inTransaction(deps.db, async (trx) => {
    const row = await updateBrandRow(trx, brandId, { ...patch, updated_at: now });
    if (!row) throw brandNotFound(brandId);
    if (input.currency !== undefined) await refuseRatesInOtherCurrency(trx, row.address, input.currency);
    await insertAuditEntry(trx, {
      actor: actorOf(deps),
      action: 'brand.update',
      subject: row.address,
      details: { ...input },
      at: now,
    });
    // Turning the X bot on for a brand gives it the bot's rules it does not have yet.
    const xRules: string[] = [];
    if (input.xHandle) {
      for (const rule of X_DEFAULT_RULES) {
        const created = await insertRuleIfAbsent(trx, newRuleRow(deps, row.address, rule, now));
        if (created) xRules.push(created.event_type);
      }
      if (xRules.length > 0) {
        await insertAuditEntry(trx, {
          actor: actorOf(deps),
          action: 'rule.seed_x_defaults',
          subject: row.address,
          details: { eventTypes: xRules },
          at: now,
        });
      }
    }
    return { row, xRules };
  });
  deps.changes?.emit({ kind: 'brand', brandId: row.address });
  if (xRules.length > 0) deps.changes?.emit({ kind: 'rules', brandId: row.address });
  return toBrand(row);
}

/**
 * Removes a verified domain from the brand (docs/portal.md, "Integrations"): its pages no longer send events
 * as the brand's (CORS, unsigned events) until it is verified again. The website domain itself stays the
 * brand's. 404 when the domain is not among its verified domains. The portal, `DELETE
 * /admin/brands/:brandId/domains/:domain` and `pts brand remove-domain` call this.
 */
export async function removeBrandDomain(deps: BrandServiceDeps, brandId: string, domain: string): Promise<Brand> {
  const name = domain.trim().toLowerCase();
  const now = deps.clock.now();
  const row = await inTransaction(deps.db, async (trx) => {
    const brand = await findBrandByAddress(trx, brandId);
    if (!brand) throw brandNotFound(brandId);
    const row = await removeVerifiedDomainRow(trx, brand.address, name, now);
    if (!row) {
      throw new AppError(
        'NOT_FOUND',
        `${name} is not one of the brand's verified domains (${brand.verified_domains.join(', ') || 'none'})`,
        { field: 'domain', value: name },
      );
    }
    await insertAuditEntry(trx, {
      actor: actorOf(deps),
      action: 'brand.domain_remove',
      subject: row.address,
      details: { domain: name },
      at: now,
    });
    return row;
  });
  deps.changes?.emit({ kind: 'brand', brandId: row.address });
  return toBrand(row);
}

/**
 * Creates or replaces the brand's rule for `input.eventType` (PUT semantics: omitted settings take their
 * defaults). A rule keeps its eventId and claim counter across updates.
 */
export async function setRule(deps: BrandServiceDeps, brandId: string, input: RuleSettings): Promise<Rule> {
  const now = deps.clock.now();
  const row = await inTransaction(deps.db, async (trx) => {
    const brand = await findBrandByAddress(trx, brandId);
    if (!brand) throw brandNotFound(brandId);
    if (input.rate && input.rate.currency !== brand.currency) {
      throw new AppError(
        'VALIDATION_ERROR',
        `rate.currency ${input.rate.currency} is not the brand's currency ${brand.currency}: give the rate in ${brand.currency}, or change the brand's currency first`,
        { field: 'rate.currency', value: input.rate.currency, brandCurrency: brand.currency },
      );
    }
    const values = newRuleRow(deps, brand.address, input, now);
    const row = await upsertRule(trx, values);
    await insertAuditEntry(trx, {
      actor: actorOf(deps),
      action: 'rule.set',
      subject: brand.address,
      details: { eventId: row.id, ...input },
      at: now,
    });
    return row;
  });
  deps.changes?.emit({ kind: 'rules', brandId: row.brand_id });
  return toRule(row);
}

/**
 * Archives (`archived` true) or restores the brand's rule for `eventType` (docs/portal.md, "Undo"). An archived
 * rule is paused and marked: its events are refused with RULE_ARCHIVED, and every list of active rules leaves
 * it out. A restored rule comes back paused, so it earns again only when someone resumes it. Audited as
 * `rule.archive` or `rule.restore`; RULE_NOT_FOUND for a rule the brand does not have, CONFLICT when it is
 * already in the asked state.
 */
export async function archiveRule(
  deps: BrandServiceDeps,
  brandId: string,
  eventType: string,
  archived: boolean,
): Promise<Rule> {
  const now = deps.clock.now();
  const row = await inTransaction(deps.db, async (trx) => {
    const brand = await findBrandByAddress(trx, brandId);
    if (!brand) throw brandNotFound(brandId);
    const current = await trx
      .selectFrom('event_rules')
      .selectAll()
      .where('brand_id', '=', brand.address)
      .where('event_type', '=', eventType)
      .forUpdate()
      .executeTakeFirst();
    if (!current) {
      throw new AppError('RULE_NOT_FOUND', `This brand has no ${eventType} rule`, {
        field: 'eventType',
        value: eventType,
      });
    }
    if (archived === (current.archived_at !== null)) {
      throw new AppError(
        'CONFLICT',
        archived ? `The ${eventType} rule is already archived` : `The ${eventType} rule is not archived`,
        { field: 'eventType', value: eventType },
      );
    }
    const row = await trx
      .updateTable('event_rules')
      .set(archived ? { archived_at: now, active: false, updated_at: now } : { archived_at: null, updated_at: now })
      .where('brand_id', '=', brand.address)
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await insertAuditEntry(trx, {
      actor: actorOf(deps),
      action: archived ? 'rule.archive' : 'rule.restore',
      subject: brand.address,
      details: { eventId: row.id, eventType, wasActive: current.active },
      at: now,
    });
    return row;
  });
  deps.changes?.emit({ kind: 'rules', brandId: row.brand_id });
  return toRule(row);
}

/** The brand's rules ordered by event type, or BRAND_NOT_FOUND. */
export async function listRules(
  deps: BrandReadDeps,
  brandId: string,
  options: { activeOnly: boolean } = { activeOnly: false },
): Promise<Rule[]> {
  const brand = await findBrandByAddress(deps.db, brandId);
  if (!brand) throw brandNotFound(brandId);
  return (await listRuleRows(deps.db, brand.address, options)).map(toRule);
}

/**
 * Creates the spec 2.4 default rules the brand does not have yet; rules the brand already set are left
 * alone, so calling it again is harmless. Returns the rules it created.
 */
export async function seedDefaultRules(deps: BrandServiceDeps, brandId: string): Promise<Rule[]> {
  const now = deps.clock.now();
  const created = await inTransaction(deps.db, async (trx) => {
    const brand = await findBrandByAddress(trx, brandId);
    if (!brand) throw brandNotFound(brandId);
    const created = await insertDefaultRules(trx, deps, brand.address, now);
    if (created.length > 0) {
      await insertAuditEntry(trx, {
        actor: actorOf(deps),
        action: 'rule.seed_defaults',
        subject: brand.address,
        details: { eventTypes: created.map((rule) => rule.eventType) },
        at: now,
      });
    }
    return created;
  });
  if (created[0]) deps.changes?.emit({ kind: 'rules', brandId: created[0].brandId });
  return created;
}

async function insertDefaultRules(trx: Kysely<DB>, deps: BrandServiceDeps, brandId: string, now: Date) {
  const created: Rule[] = [];
  for (const [eventType, rewardAmount] of Object.entries(DEFAULT_EVENT_REWARDS)) {
    const row = await insertRuleIfAbsent(trx, newRuleRow(deps, brandId, { eventType, rewardAmount }, now));
    if (row) created.push(toRule(row));
  }
  return created;
}

function newRuleRow(deps: BrandServiceDeps, brandId: string, input: RuleSettings, now: Date): NewRuleRow {
  const { id, isCustom } = newRuleIdentity(input.eventType);
  const detectionConfig: DetectionConfig = { ...input.detectionConfig };
  if (input.channels !== undefined) detectionConfig.channels = input.channels;
  return {
    // Only used when the row is new: an update keeps the stored id (see upsertRule).
    id,
    brand_id: brandId,
    event_type: input.eventType,
    // A rate rule pays by each event's value; its fixed amount is 0.
    reward_amount: input.rewardAmount ?? 0,
    rate: input.rate ? JSON.stringify(storedRateOf(input)) : null,
    cooldown_hours: input.cooldownHours ?? deps.defaultCooldownHours ?? DEFAULT_COOLDOWN_HOURS,
    max_claims_per_user: input.maxClaims ?? DEFAULT_MAX_CLAIMS,
    max_total_claims: input.maxTotal ?? null,
    detection_method: input.detectionMethod ?? 'manual',
    detection_config: JSON.stringify(detectionConfig),
    is_custom: isCustom,
    active: input.active ?? true,
    created_at: now,
    updated_at: now,
  };
}

/**
 * A brand's currency may change only while none of its rate rules is in another one: their rates would
 * silently pay in the wrong unit. Runs in the update's transaction, so a refusal rolls the change back.
 */
async function refuseRatesInOtherCurrency(trx: Kysely<DB>, brandId: string, currency: string): Promise<void> {
  const rules = await listRuleRows(trx, brandId, { activeOnly: false });
  const others = rules.filter((rule) => rule.rate && rule.rate.currency !== currency).map((rule) => rule.event_type);
  if (others.length > 0) {
    throw new AppError(
      'CONFLICT',
      `The brand's rate rules ${others.join(', ')} pay in another currency: set them in ${currency} (or as fixed rewards) before changing the currency`,
      { field: 'currency', value: currency, rateRules: others },
    );
  }
}

/** A rate rule's settings as stored on the rule: the rate (rounding down unless said) with its limits. */
function storedRateOf(input: RuleSettings): StoredRateTerms | null {
  if (!input.rate) return null;
  return {
    ...input.rate,
    rounding: input.rate.rounding ?? 'down',
    ...(input.minValue === undefined ? {} : { minValue: input.minValue }),
    ...(input.maxReward === undefined ? {} : { maxReward: input.maxReward }),
  };
}

function actorOf(deps: BrandServiceDeps): string {
  return deps.actor ?? 'admin';
}

/** 404 for a Brand ID nobody registered, saying where the ids are listed. */
export function brandNotFound(brandId: string): AppError {
  return new AppError('BRAND_NOT_FOUND', `No brand with Brand ID ${brandId}; \`pts brand list\` shows the brands`, {
    field: 'brandId',
    value: brandId,
  });
}

function brandExists(address: string): AppError {
  return new AppError(
    'CONFLICT',
    `A brand with address ${address} already exists; omit the address to derive a new one`,
    { field: 'address', value: address },
  );
}
