import { createHash } from 'node:crypto';
import {
  AppError,
  type Clock,
  type CurrencyCode,
  entryRewardsDue,
  lastTierTurn,
  type MemberTierResponse,
  type TierDistribution,
  type TiersResponse,
  tierIndexFor,
  tierPeriodStart,
  tierStanding,
  turnDecision,
} from '@pts/shared';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../db/database.ts';
import { resolveMember } from '../accounts/accounts.service.ts';
import { insertAuditEntry } from '../brands/brands.repository.ts';
import { requireBrandExists } from '../brands/brands.service.ts';
import { enqueueWebhooks } from '../webhooks/webhooks.outbox.ts';
import {
  type BrandTierTable,
  formatUnits,
  heldTier,
  loadTierTable,
  memberTierTotal,
  normalizeTiers,
  TIER_ENTRY_EVENT_TYPE,
  tierTotalSql,
} from './tiers.repository.ts';

/**
 * VIP tiers (docs/tiers.md): the brand's table, a member's standing, promotions with their entry rewards (paid
 * through the one award path, once per member and tier), and the period's turn. The tier multiplier is applied
 * by the event pipeline (events.service.ts), from the held tier this module keeps.
 */

/**
 * The one award path as this module uses it (the event service's `award`, with a manual award's shape): typed
 * here so that tiers and the event pipeline, which promotes through this module, import no cycle.
 */
export interface TierAwardPath {
  award(request: {
    kind: 'manual';
    eventType: string;
    brandId: string;
    userEmail: string;
    amount: bigint;
    reason: string;
    awardedBy: string;
    idempotencyKey: string;
  }): Promise<{ eventId: string }>;
}

export interface TierInput {
  basis: 'earned' | 'spent';
  period: 'rolling_365' | 'calendar_year' | 'lifetime';
  graceDays: number;
  tiers: {
    name: string;
    threshold: number | string;
    multiplier: number;
    entryReward: number;
    perks?: number[] | undefined;
  }[];
}

async function brandCurrency(db: Database, brandId: string): Promise<CurrencyCode> {
  await requireBrandExists(db, brandId);
  const row = await db.selectFrom('brands').select('currency').where('address', '=', brandId).executeTakeFirstOrThrow();
  return row.currency as CurrencyCode;
}

function tableAnswer(brandId: string, currency: CurrencyCode, table: BrandTierTable | undefined): TiersResponse {
  return {
    success: true,
    brandId,
    basis: table?.basis ?? null,
    period: table?.period ?? null,
    graceDays: table?.graceDays ?? 0,
    currency,
    tiers: table ? table.stored.map((t) => ({ ...t, perks: t.perks ?? [] })) : null,
  };
}

/** Replaces the brand's table, audited (`tiers.set`, before and after). Members keep their held tier until the next event or turn. */
export async function setTierTable(
  deps: { db: Database; clock: Clock },
  brandId: string,
  input: TierInput,
  actor: string,
): Promise<TiersResponse> {
  const currency = await brandCurrency(deps.db, brandId);
  const { stored } = normalizeTiers(input, currency);
  const perkIds = stored.flatMap((t) => t.perks ?? []);
  if (perkIds.length > 0) {
    const found = await deps.db
      .selectFrom('perks')
      .select('id')
      .where('brand_id', '=', brandId)
      .where('id', 'in', perkIds.map(BigInt))
      .execute();
    const known = new Set(found.map((p) => Number(p.id)));
    const missing = perkIds.filter((id) => !known.has(id));
    if (missing.length > 0) {
      throw new AppError(
        'VALIDATION_ERROR',
        `tiers[].perks names perks this brand does not have: ${missing.join(', ')}`,
        {
          field: 'tiers.perks',
          value: missing.join(', '),
        },
      );
    }
  }
  const at = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const before = await trx
      .selectFrom('brand_tiers')
      .selectAll()
      .where('brand_id', '=', brandId)
      .forUpdate()
      .executeTakeFirst();
    const row = {
      basis: input.basis,
      period: input.period,
      grace_days: input.graceDays,
      tiers: JSON.stringify(stored),
      updated_at: at,
    };
    await trx
      .insertInto('brand_tiers')
      .values({ brand_id: brandId, ...row })
      .onConflict((oc) => oc.column('brand_id').doUpdateSet(row))
      .execute();
    await insertAuditEntry(trx, {
      actor,
      action: 'tiers.set',
      subject: brandId,
      brandId,
      details: {
        before: before
          ? { basis: before.basis, period: before.period, graceDays: before.grace_days, tiers: before.tiers }
          : null,
        after: { basis: input.basis, period: input.period, graceDays: input.graceDays, tiers: stored },
      },
      at,
    });
  });
  return tableAnswer(brandId, currency, await loadTierTable(deps.db, brandId, currency));
}

export async function readTierTable(db: Database, brandId: string): Promise<TiersResponse> {
  const currency = await brandCurrency(db, brandId);
  return tableAnswer(brandId, currency, await loadTierTable(db, brandId, currency));
}

/** The member's tier, the next one, and what is left to reach it (the held tier counts: promotions are kept until the turn). */
export async function memberTier(
  deps: { db: Database; clock: Clock },
  brandId: string,
  member: string,
): Promise<MemberTierResponse> {
  const currency = await brandCurrency(deps.db, brandId);
  const table = await loadTierTable(deps.db, brandId, currency);
  const base = { success: true as const, brandId, userIdentifier: member };
  if (!table) {
    return {
      ...base,
      tier: null,
      multiplier: 1,
      next: null,
      progress: { basis: null, period: null, current: '0', remaining: null, graceUntil: null },
    };
  }
  const [total, held] = await Promise.all([
    memberTierTotal(deps.db, table, brandId, member, deps.clock.now()),
    heldTier(deps.db, brandId, member),
  ]);
  const heldIndex = held && held.tier_index < table.levels.length ? held.tier_index : undefined;
  const standing = tierStanding(table.levels, total, heldIndex);
  const tier = table.stored[standing.index]!;
  const next = standing.next === null ? null : table.stored[standing.next]!;
  return {
    ...base,
    tier: tier.name,
    multiplier: tier.multiplier,
    next: next ? { name: next.name, threshold: next.threshold } : null,
    progress: {
      basis: table.basis,
      period: table.period,
      current: formatUnits(table.basis, total, currency),
      remaining: standing.remaining === null ? null : formatUnits(table.basis, standing.remaining, currency),
      graceUntil: held?.grace_until ? held.grace_until.toISOString() : null,
    },
  };
}

/**
 * How many members hold each tier, in one statement: the brand's members (accounts, brand_member_totals) with
 * their held tier; one not judged since the table was set (no event since, no turn yet) counts in the first tier.
 */
export async function tierDistribution(db: Database, brandId: string): Promise<TierDistribution> {
  const currency = await brandCurrency(db, brandId);
  const table = await loadTierTable(db, brandId, currency);
  if (!table) return { success: true, brandId, basis: null, period: null, members: 0, tiers: [] };
  const top = table.stored.length - 1;
  const rows = await sql<{ tier: number; members: string }>`
    SELECT least(coalesce(h.tier_index, 0), ${top}::int) AS tier, count(*)::text AS members
      FROM brand_member_totals t
      LEFT JOIN member_tiers h ON h.brand_id = t.brand_id AND h.member = t.member
     WHERE t.brand_id = ${brandId}
     GROUP BY 1`.execute(db);
  const counts = new Map(rows.rows.map((row) => [Number(row.tier), Number(row.members)]));
  const tiers = table.stored.map((tier, i) => ({
    name: tier.name,
    threshold: tier.threshold,
    members: counts.get(i) ?? 0,
  }));
  return {
    success: true,
    brandId,
    basis: table.basis,
    period: table.period,
    members: tiers.reduce((sum, tier) => sum + tier.members, 0),
    tiers,
  };
}

/** Pays an owed entry reward through the one award path; its externalId makes a re-drive pay once. */
export async function payEntryReward(
  deps: { db: Database; events: TierAwardPath },
  entry: { brandId: string; member: string; tierName: string; amount: number },
): Promise<void> {
  const accepted = await deps.events.award({
    kind: 'manual',
    eventType: TIER_ENTRY_EVENT_TYPE,
    brandId: entry.brandId,
    userEmail: entry.member,
    amount: BigInt(entry.amount),
    reason: `Entry reward: ${entry.tierName}`,
    awardedBy: 'tiers',
    // Keyed per brand and event type: the member and the tier make it one per member and tier.
    idempotencyKey: `tier-entry:${createHash('sha256').update(`${entry.member}\n${entry.tierName}`).digest('hex').slice(0, 40)}`,
  });
  await deps.db
    .updateTable('member_tier_entries')
    .set({ event_id: accepted.eventId })
    .where('brand_id', '=', entry.brandId)
    .where('member', '=', entry.member)
    .where('tier_name', '=', entry.tierName)
    .execute();
}

/**
 * After an accepted event: promotes the member at once if their total now reaches a higher tier (under the
 * member's row lock), records the entry rewards due (once per member and tier: the primary key), announces
 * `member.tier_changed`, then pays the entries. Never lowers a tier: that waits for the period's turn.
 */
export async function promoteMember(
  deps: { db: Database; clock: Clock; events: TierAwardPath },
  table: BrandTierTable,
  brandId: string,
  identity: string,
): Promise<{ from: string | null; to: string } | undefined> {
  const now = deps.clock.now();
  // Kept per account: every identity of a linked member earns toward one tier, and an entry reward one of them
  // was paid before the link is not paid again.
  const { accountKey: member, identityKeys } = await resolveMember(deps.db, identity);
  const outcome = await deps.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('member_tiers')
      .values({ brand_id: brandId, member, tier_index: 0, tier_name: table.stored[0]!.name, changed_at: now })
      .onConflict((oc) => oc.columns(['brand_id', 'member']).doNothing())
      .execute();
    const held = await trx
      .selectFrom('member_tiers')
      .select(['tier_index', 'tier_name'])
      .where('brand_id', '=', brandId)
      .where('member', '=', member)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const total = await memberTierTotal(trx, table, brandId, member, now);
    const computed = tierIndexFor(table.levels, total);
    if (computed <= held.tier_index) return undefined;
    const to = table.stored[computed]!.name;
    await trx
      .updateTable('member_tiers')
      .set({ tier_index: computed, tier_name: to, grace_until: null, changed_at: now })
      .where('brand_id', '=', brandId)
      .where('member', '=', member)
      .execute();
    const paid = await trx
      .selectFrom('member_tier_entries')
      .select('tier_name')
      .where('brand_id', '=', brandId)
      .where('member', 'in', identityKeys)
      .execute();
    const due = entryRewardsDue(table.levels, held.tier_index, computed, new Set(paid.map((p) => p.tier_name)));
    const owed =
      due.length === 0
        ? []
        : await trx
            .insertInto('member_tier_entries')
            .values(
              due.map((l) => ({
                brand_id: brandId,
                member,
                tier_name: l.name,
                amount: l.entryReward,
                created_at: now,
              })),
            )
            .onConflict((oc) => oc.columns(['brand_id', 'member', 'tier_name']).doNothing())
            .returning(['tier_name', 'amount'])
            .execute();
    const from = held.tier_index === 0 && total === 0n ? null : held.tier_name;
    await enqueueWebhooks(trx, [tierChanged(brandId, member, held.tier_name, to, 'up', now)]);
    return { from, to, owed };
  });
  if (!outcome) return undefined;
  for (const entry of outcome.owed) {
    await payEntryReward(deps, { brandId, member, tierName: entry.tier_name, amount: entry.amount });
  }
  return { from: outcome.from, to: outcome.to };
}

function tierChanged(
  brandId: string,
  member: string,
  from: string | null,
  to: string,
  direction: 'up' | 'down',
  at: Date,
) {
  return {
    brandId,
    type: 'member.tier_changed' as const,
    data: { brandId, userId: member, email: member, from, to, direction, timestamp: at.getTime() },
    at,
  };
}

/** What one run of the period's turn did. */
export interface TierTurnResult {
  brands: number;
  members: number;
  promoted: number;
  downgraded: number;
  inGrace: number;
  entriesPaid: number;
}

const TURN_PAGE = 5_000;
const DAY_MS = 86_400_000;
/** A replica's claim on a brand's run lapses after this long (it stopped mid-run): another one takes it over. */
const TURN_LEASE_MS = 15 * 60_000;

/**
 * Claims today's run for a brand, once across replicas: the conditional UPDATE succeeds for one process only
 * (a lease that lapses if that process stops). Answers whether the period turned since the brand's last run.
 */
async function claimTurn(db: Database, brandId: string, now: Date, turnAt: Date) {
  const today = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
  const claimed = await db
    .updateTable('brand_tiers')
    .set({ turn_claimed_at: now })
    .where('brand_id', '=', brandId)
    .where((eb) => eb.or([eb('last_turn_at', 'is', null), eb('last_turn_at', '<', today)]))
    .where((eb) =>
      eb.or([eb('turn_claimed_at', 'is', null), eb('turn_claimed_at', '<', new Date(now.getTime() - TURN_LEASE_MS))]),
    )
    .returning('last_turn_at')
    .executeTakeFirst();
  if (!claimed) return undefined;
  return { turned: claimed.last_turn_at === null || claimed.last_turn_at < turnAt };
}

/**
 * A brand's daily run (docs/tiers.md, "The period's turn"), claimed once across replicas. On the first run after
 * the period turned, every member holding a tier is judged against their total: up at once, down after the grace
 * that starts at the turn (`turnDecision`); later runs only end graces and promote what a failed promotion
 * missed. Members are read 5,000 a statement with their totals summed in the database; each page's downgrades
 * are one UPDATE and their `member.tier_changed` webhooks one INSERT.
 */
export async function turnBrandTiers(
  deps: { db: Database; clock: Clock; events: TierAwardPath },
  brandId: string,
  table: BrandTierTable,
): Promise<Omit<TierTurnResult, 'brands'> | undefined> {
  const now = deps.clock.now();
  const turnAt = lastTierTurn(table.period, now);
  const claim = await claimTurn(deps.db, brandId, now, turnAt);
  if (!claim) return undefined;
  const result = { members: 0, promoted: 0, downgraded: 0, inGrace: 0, entriesPaid: 0 };
  const total = tierTotalSql(
    table.basis,
    sql.ref('m.brand_id'),
    sql.ref('m.member'),
    tierPeriodStart(table.period, now),
  );
  let after = '';
  for (;;) {
    // A row left under an identity that has since been linked to an account is not a member of its own: skipped.
    const page = await sql<{ member: string; tier_index: number; grace_until: Date | null; total: string }>`
      SELECT m.member, m.tier_index, m.grace_until, ${total} AS total
        FROM member_tiers m
       WHERE m.brand_id = ${brandId} AND m.member > ${after}
         AND NOT EXISTS (SELECT 1 FROM account_links l WHERE l.identity_key = m.member)
       ORDER BY m.member LIMIT ${TURN_PAGE}`.execute(deps.db);
    if (page.rows.length === 0) break;
    after = page.rows[page.rows.length - 1]!.member;
    const changes = turnChanges(table, page.rows, turnAt, now, claim.turned);
    result.members += page.rows.length;
    await applyTurnChanges(deps.db, brandId, table, changes, now, result);
    for (const up of changes.filter((c) => c.index > c.held)) {
      const promoted = await promoteMember(deps, table, brandId, up.member);
      if (promoted) result.promoted++;
    }
  }
  result.entriesPaid = await payOwedEntries(deps, brandId);
  await deps.db
    .updateTable('brand_tiers')
    .set({ last_turn_at: now, turn_claimed_at: null })
    .where('brand_id', '=', brandId)
    .execute();
  return result;
}

interface TurnChange {
  member: string;
  held: number;
  index: number;
  graceUntil: Date | null;
  graceChanged: boolean;
}

function turnChanges(
  table: BrandTierTable,
  rows: { member: string; tier_index: number; grace_until: Date | null; total: string }[],
  turnAt: Date,
  now: Date,
  turned: boolean,
): TurnChange[] {
  const changes: TurnChange[] = [];
  for (const row of rows) {
    const held = Math.min(row.tier_index, table.levels.length - 1);
    const total = tierIndexFor(table.levels, BigInt(row.total));
    // Between turns only a grace running out lowers a tier (a reversal's effect waits for the turn).
    const computed = turned || row.grace_until !== null || total > held ? total : held;
    const decision = turnDecision({ index: held, graceUntil: row.grace_until }, computed, turnAt, now, table.graceDays);
    const graceChanged = (decision.graceUntil?.getTime() ?? null) !== (row.grace_until?.getTime() ?? null);
    if (decision.index !== row.tier_index || graceChanged) {
      changes.push({
        member: row.member,
        held: row.tier_index,
        index: decision.index,
        graceUntil: decision.graceUntil,
        graceChanged,
      });
    }
  }
  return changes;
}

/** Downgrades and grace marks of one page in one statement; promotions go through `promoteMember` (entry rewards). */
async function applyTurnChanges(
  db: Database,
  brandId: string,
  table: BrandTierTable,
  changes: TurnChange[],
  now: Date,
  result: Omit<TierTurnResult, 'brands'>,
): Promise<void> {
  const writes = changes.filter((c) => c.index <= c.held);
  if (writes.length === 0) return;
  const values = sql.join(
    writes.map(
      (c) => sql`(${c.member}, ${c.index}::int, ${table.stored[c.index]!.name}, ${c.graceUntil}::timestamptz)`,
    ),
  );
  await db.transaction().execute(async (trx) => {
    await sql`
      UPDATE member_tiers m SET tier_index = v.idx, tier_name = v.name, grace_until = v.grace,
             changed_at = CASE WHEN m.tier_index <> v.idx THEN ${now}::timestamptz ELSE m.changed_at END
        FROM (VALUES ${values}) AS v (member, idx, name, grace)
       WHERE m.brand_id = ${brandId} AND m.member = v.member`.execute(trx);
    const downs = writes.filter((c) => c.index < c.held);
    if (downs.length > 0) {
      await enqueueWebhooks(
        trx,
        downs.map((c) =>
          tierChanged(brandId, c.member, table.stored[c.held]?.name ?? null, table.stored[c.index]!.name, 'down', now),
        ),
      );
    }
  });
  for (const c of writes) {
    if (c.index < c.held) result.downgraded++;
    else if (c.graceUntil) result.inGrace++;
  }
}

/** Entry rewards recorded but not yet paid (a process stopped between the promotion and the award): paid now, once. */
async function payOwedEntries(deps: { db: Database; events: TierAwardPath }, brandId: string) {
  const owed = await deps.db
    .selectFrom('member_tier_entries')
    .select(['member', 'tier_name', 'amount'])
    .where('brand_id', '=', brandId)
    .where('event_id', 'is', null)
    .execute();
  for (const entry of owed) {
    await payEntryReward(deps, { brandId, member: entry.member, tierName: entry.tier_name, amount: entry.amount });
  }
  return owed.length;
}

/** The turn for every brand with a table. */
export async function runTierTurn(deps: {
  db: Database;
  clock: Clock;
  logger: Logger;
  events: TierAwardPath;
}): Promise<TierTurnResult> {
  const brands = await deps.db
    .selectFrom('brand_tiers')
    .innerJoin('brands', 'brands.address', 'brand_tiers.brand_id')
    .select(['brand_tiers.brand_id', 'brands.currency'])
    .execute();
  const total: TierTurnResult = { brands: 0, members: 0, promoted: 0, downgraded: 0, inGrace: 0, entriesPaid: 0 };
  for (const brand of brands) {
    const table = await loadTierTable(deps.db, brand.brand_id, brand.currency as CurrencyCode);
    if (!table) continue;
    const r = await turnBrandTiers(deps, brand.brand_id, table);
    if (!r) continue;
    total.brands++;
    total.members += r.members;
    total.promoted += r.promoted;
    total.downgraded += r.downgraded;
    total.inGrace += r.inGrace;
    total.entriesPaid += r.entriesPaid;
  }
  deps.logger.info(total, 'tier turn done');
  return total;
}

/** The tier operations the routes, the CLI's admin API and the job use, over one database and the one award path. */
export interface TierService {
  table(brandId: string): Promise<TiersResponse>;
  setTable(brandId: string, input: TierInput, actor: string): Promise<TiersResponse>;
  member(brandId: string, member: string): Promise<MemberTierResponse>;
  distribution(brandId: string): Promise<TierDistribution>;
  runTurn(): Promise<TierTurnResult>;
}

export function createTierService(deps: {
  db: Database;
  clock: Clock;
  logger: Logger;
  events: TierAwardPath & { brands: { invalidate(brandId?: string): void } };
}): TierService {
  return {
    table: (brandId) => readTierTable(deps.db, brandId),
    setTable: async (brandId, input, actor) => {
      const answer = await setTierTable(deps, brandId, input, actor);
      deps.events.brands.invalidate(brandId);
      return answer;
    },
    member: (brandId, member) => memberTier(deps, brandId, member),
    distribution: (brandId) => tierDistribution(deps.db, brandId),
    runTurn: () => runTierTurn(deps),
  };
}
