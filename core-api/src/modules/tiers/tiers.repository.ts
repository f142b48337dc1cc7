import {
  AppError,
  amountProblem,
  type CurrencyCode,
  formatMinorUnits,
  type TierLevel,
  type TierTable,
  tierPeriodStart,
  tierTableProblem,
  toMinorUnits,
} from '@pts/shared';
import { type RawBuilder, sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { StoredTier } from '../../db/schema.ts';

/** The event type entry rewards are recorded under; their pts never count toward a tier (no cascades). */
export const TIER_ENTRY_EVENT_TYPE = 'tier_entry';

/** A brand's table as the judge and the job read it: the rules' levels, and each tier's exclusive perks. */
export interface BrandTierTable extends TierTable {
  currency: CurrencyCode;
  stored: StoredTier[];
  lastTurnAt: Date | null;
}

/** A stored threshold in basis units: pts for `earned`, minor units of the currency for `spent`. */
export function thresholdUnits(basis: TierTable['basis'], threshold: string, currency: CurrencyCode): bigint {
  return basis === 'earned' ? BigInt(threshold) : toMinorUnits(threshold, currency);
}

/** Basis units back to what a person reads: pts, or an amount of the currency ("12.50"). */
export function formatUnits(basis: TierTable['basis'], units: bigint, currency: CurrencyCode): string {
  return basis === 'earned' ? units.toString() : formatMinorUnits(units, currency);
}

/**
 * A brand's input checked and normalized (400s that say what to fix): thresholds as the basis takes them
 * (whole pts; an amount of the currency with at most its decimals), then the table's own rules.
 */
export function normalizeTiers(
  input: {
    basis: TierTable['basis'];
    tiers: {
      name: string;
      threshold: number | string;
      multiplier: number;
      entryReward: number;
      perks?: number[] | undefined;
    }[];
  },
  currency: CurrencyCode,
): { stored: StoredTier[]; levels: TierLevel[] } {
  const stored = input.tiers.map((tier, i): StoredTier => {
    const raw = String(tier.threshold);
    const problem =
      input.basis === 'earned'
        ? /^(0|[1-9]\d*)$/.test(raw)
          ? undefined
          : 'must be a whole number of pts for basis "earned"'
        : amountProblem(raw, currency);
    if (problem) {
      throw new AppError('VALIDATION_ERROR', `tiers.${i}.threshold ${problem}`, {
        field: `tiers.${i}.threshold`,
        value: raw,
      });
    }
    const canonical = input.basis === 'earned' ? raw : formatMinorUnits(toMinorUnits(raw, currency), currency);
    return {
      name: tier.name,
      threshold: canonical,
      multiplier: tier.multiplier,
      entryReward: tier.entryReward,
      perks: [...new Set(tier.perks ?? [])],
    };
  });
  const levels = levelsOf(input.basis, stored, currency);
  const problem = tierTableProblem(levels);
  if (problem) throw new AppError('VALIDATION_ERROR', `${problem.field} ${problem.message}`, { field: problem.field });
  return { stored, levels };
}

function levelsOf(basis: TierTable['basis'], stored: StoredTier[], currency: CurrencyCode): TierLevel[] {
  return stored.map((tier) => ({
    name: tier.name,
    threshold: thresholdUnits(basis, tier.threshold, currency),
    multiplierHundredths: Math.round(tier.multiplier * 100),
    entryReward: tier.entryReward,
  }));
}

/** The brand's table, or undefined while it has none. */
export async function loadTierTable(
  db: Database,
  brandId: string,
  currency: CurrencyCode,
): Promise<BrandTierTable | undefined> {
  const row = await db.selectFrom('brand_tiers').selectAll().where('brand_id', '=', brandId).executeTakeFirst();
  if (!row) return undefined;
  const stored = typeof row.tiers === 'string' ? (JSON.parse(row.tiers) as StoredTier[]) : row.tiers;
  return {
    basis: row.basis,
    period: row.period,
    graceDays: row.grace_days,
    levels: levelsOf(row.basis, stored, currency),
    currency,
    stored,
    lastTurnAt: row.last_turn_at,
  };
}

/**
 * The account an identity belongs to, in SQL (modules/accounts resolveAccountKey's one lookup): tiers are kept
 * per account, so a member who linked Discord and Telegram holds one tier from both identities' earnings.
 */
function accountKeyOf(identity: string) {
  return sql<string>`coalesce((SELECT account_key FROM account_links WHERE identity_key = ${identity}), ${identity})`;
}

/** A member's held tier row (any of their identities names their account's), or undefined before their first accepted event under a table. */
export async function heldTier(db: Database, brandId: string, member: string) {
  return db
    .selectFrom('member_tiers')
    .select(['member', 'tier_index', 'tier_name', 'grace_until'])
    .where('brand_id', '=', brandId)
    .where('member', '=', accountKeyOf(member))
    .executeTakeFirst();
}

/**
 * The one definition of a member's tier total, as SQL over an account key expression: what every identity of the
 * account earned (pts of accepted events) or spent (their value, minor units) at the brand since `from`, less what
 * reversals of those events took back (pts, or the refunded value), entry rewards left out (a promotion never pays
 * for the next one). The standing, the promotion and the period's turn all read it, so a reversal lowers the tier
 * basis everywhere at once (docs/tiers.md, "Reversals").
 */
export function tierTotalSql(
  basis: TierTable['basis'],
  brandId: RawBuilder<unknown> | string,
  account: RawBuilder<unknown> | string,
  from: Date,
): RawBuilder<string> {
  const value = basis === 'earned' ? sql`e.reward_amount` : sql`e.value_minor`;
  const taken = basis === 'earned' ? sql`r.pts` : sql`r.refunded_minor`;
  const identities = sql`(SELECT ${account}::text UNION ALL SELECT identity_key FROM account_links WHERE account_key = ${account})`;
  return sql<string>`((SELECT coalesce(sum(${value}), 0) FROM events e
      WHERE e.user_email IN ${identities} AND e.brand_id = ${brandId} AND e.status = 'accepted'
        AND e.created_at >= ${from} AND e.event_type <> ${TIER_ENTRY_EVENT_TYPE})
    - (SELECT coalesce(sum(${taken}), 0) FROM events e JOIN reward_reversals r ON r.event_id = e.id
      WHERE e.user_email IN ${identities} AND e.brand_id = ${brandId} AND e.status = 'accepted'
        AND e.created_at >= ${from} AND e.event_type <> ${TIER_ENTRY_EVENT_TYPE}))::text`;
}

/**
 * The member's total over the table's period at `at`, from the one ledger (tierTotalSql): `member` is any identity
 * of the account (its account's total is answered).
 */
export async function memberTierTotal(
  db: Database,
  table: Pick<TierTable, 'basis' | 'period'>,
  brandId: string,
  member: string,
  at: Date,
): Promise<bigint> {
  const row = await sql<{ total: string }>`
    SELECT ${tierTotalSql(table.basis, brandId, accountKeyOf(member), tierPeriodStart(table.period, at))} AS total`.execute(
    db,
  );
  return BigInt(row.rows[0]?.total ?? '0');
}

/**
 * Whether a perk is kept for a tier and up, and whether the member holds it (their held tier: a tier kept through
 * a grace counts): undefined when no tier of the brand lists the perk. What `judgeRedemption` reads as `tier`.
 */
export async function perkTierRequirement(
  db: Database,
  brandId: string,
  perkId: bigint,
  member: string,
): Promise<{ required: string; held: string; met: boolean } | undefined> {
  const row = await db.selectFrom('brand_tiers').select('tiers').where('brand_id', '=', brandId).executeTakeFirst();
  if (!row) return undefined;
  const stored = typeof row.tiers === 'string' ? (JSON.parse(row.tiers) as StoredTier[]) : row.tiers;
  const requiredIndex = stored.findIndex((tier) => (tier.perks ?? []).includes(Number(perkId)));
  if (requiredIndex === -1) return undefined;
  const held = await heldTier(db, brandId, member);
  const heldIndex = Math.min(held?.tier_index ?? 0, stored.length - 1);
  return {
    required: stored[requiredIndex]!.name,
    held: stored[heldIndex]!.name,
    met: heldIndex >= requiredIndex,
  };
}
