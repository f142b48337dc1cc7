import {
  AppError,
  type Clock,
  IDENTITY_PLATFORMS,
  isAppError,
  type MemberBlockState,
  type MemberEvent,
  type MemberExportQuery,
  type MemberListEntry,
  type MemberListQuery,
  type MemberMatch,
  type MemberProfile,
  parsePlatformIdentity,
} from '@pts/shared';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { getAddress, isAddress } from 'viem';
import type { Database } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { accountIdentities, memberOf, resolveAccountKeys } from '../accounts/accounts.service.ts';
import { readAchievements } from '../achievements/achievements.service.ts';
import type { ChangeNotifier } from '../brands/brand-changes.ts';
import { insertAuditEntry } from '../brands/brands.repository.ts';
import { requireBrandExists } from '../brands/brands.service.ts';
import { type ExportedEvent, readBrandEvents } from '../events/event-export.ts';
import { type EventService, MANUAL_AWARD_EVENT_TYPE } from '../events/events.service.ts';
import { findMemberBlock, type MemberBlock } from '../events/member-blocks.repository.ts';
import { readMemberFigures } from '../ledger/member-figures.ts';
import { readMemberLedger } from '../ledger/member-ledger.ts';
import type { WalletBalanceDeps } from '../ledger/wallet-balance.ts';
import { listBrandRedemptions } from '../perks/perks.repository.ts';
import { listMemberReversals } from '../reversals/deductions.ts';
import { readDailyStreaks } from '../streaks/streaks.service.ts';
import { escapeLike, listMembers, readAllMembers } from './member-list.ts';

// A brand's loyalty members as its team looks them up (the portal's Members page, docs/portal.md): found by
// e-mail, platform identity or wallet, among the people the brand has seen (an event, accepted or refused, or
// a redemption). Every figure comes from the module that owns it: the member ledger, the wallet balance,
// the streak and achievement services; a manual award goes through the event pipeline.

/** Members one search answers at most. */
export const MEMBER_SEARCH_LIMIT = 20;
/** Events and redemptions a member's page shows, newest first. */
export const MEMBER_HISTORY_LIMIT = 100;

export interface BrandMembersDeps {
  db: Database;
  clock: Clock;
  logger: Logger;
  wallet: WalletBalanceDeps;
  /** Told when a block changes, so every process's brand cache (the event path's) reads it again. */
  changes?: ChangeNotifier | undefined;
}

/** The LIKE patterns a search text stands for: the text anywhere in an identity, or `platform:id`. */
function patternsOf(text: string): string[] {
  const q = text.trim().toLowerCase();
  const platformId = /^([a-z]+):(.+)$/.exec(q);
  if (platformId && (IDENTITY_PLATFORMS as readonly string[]).includes(platformId[1]!)) {
    const platforms = platformId[1] === 'x' ? ['x', 'twitter'] : [platformId[1]!];
    return platforms.map((platform) => `${platform}\\_${escapeLike(platformId[2]!)}@%`);
  }
  return [`%${escapeLike(q)}%`];
}

/**
 * Members of the brand matching `text`: a wallet address (exactly), or identities whose key holds the text
 * anywhere (`shopper` finds `a.shopper@x.com`; `%` and `_` are literal) or whose platform id is the text
 * (`discord:123`). Most recently seen first.
 */
export async function searchMembers(deps: BrandMembersDeps, brandId: string, text: string): Promise<MemberMatch[]> {
  const q = text.trim();
  let candidates: string[] | undefined;
  if (isAddress(q, { strict: false })) {
    const owners = await deps.db
      .selectFrom('users')
      .select('email')
      .where('wallet_address', 'in', [q.toLowerCase(), getAddress(q)])
      .execute();
    const accounts = owners.map((owner) => owner.email);
    if (accounts.length === 0) return [];
    const linked = await deps.db
      .selectFrom('account_links')
      .select('identity_key')
      .where('account_key', 'in', accounts)
      .execute();
    candidates = [...accounts, ...linked.map((row) => row.identity_key)];
  }
  const match = (column: string) =>
    candidates
      ? sql`${sql.ref(column)} IN (${sql.join(candidates)})`
      : sql`(${sql.join(
          patternsOf(q).map((pattern) => sql`${sql.ref(column)} LIKE ${pattern} ESCAPE '\\'`),
          sql` OR `,
        )})`;
  const { rows } = await sql<{ key: string; last_at: Date | string | null }>`
    SELECT key, max(last_at) AS last_at FROM (
      SELECT user_email AS key, max(created_at) AS last_at FROM events
       WHERE brand_id = ${brandId} AND ${match('user_email')} GROUP BY user_email
      UNION ALL
      SELECT user_key, max(created_at) FROM perk_redemptions
       WHERE brand_id = ${brandId} AND ${match('user_key')} GROUP BY user_key
    ) seen
    GROUP BY key ORDER BY max(last_at) DESC, key LIMIT ${MEMBER_SEARCH_LIMIT}`.execute(deps.db);
  const accounts = await resolveAccountKeys(
    deps.db,
    rows.map((row) => row.key),
  );
  const wallets = await walletsOf(deps.db, [...new Set(accounts.values())]);
  return rows.map((row) => {
    const accountKey = accounts.get(row.key) ?? row.key;
    return {
      userKey: row.key,
      accountKey,
      platform: parsePlatformIdentity(row.key)?.platform ?? 'email',
      walletAddress: wallets.get(row.key) ?? wallets.get(accountKey) ?? null,
      lastSeenAt: row.last_at ? new Date(row.last_at).toISOString() : null,
    };
  });
}

async function walletsOf(db: Database, keys: string[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const rows = await db
    .selectFrom('users')
    .select(['email', 'wallet_address'])
    .where('email', 'in', keys)
    .where('wallet_address', 'is not', null)
    .execute();
  return new Map(rows.map((row) => [row.email, row.wallet_address as string]));
}

/**
 * The identity key a member is named by: an e-mail or identity key as given, or for a platform identity
 * (`discord:123`) the brand's one member with that platform id (404 when none, 409 when several service
 * domains carry it). For the admin API and the CLI, which name members as people type them.
 */
export async function resolveMemberKey(deps: BrandMembersDeps, brandId: string, member: string): Promise<string> {
  const text = member.trim().toLowerCase();
  const identity = /^([a-z]+):([^@\s:]+)$/.exec(text);
  if (!identity || !(IDENTITY_PLATFORMS as readonly string[]).includes(identity[1]!)) return text;
  const [, platform, id] = identity as unknown as [string, string, string];
  const platforms = platform === 'x' || platform === 'twitter' ? ['x', 'twitter'] : [platform];
  const keys = (await searchMembers(deps, brandId, text))
    .map((match) => match.userKey)
    .filter((key) => platforms.some((name) => key.startsWith(`${name}_${id}@`)));
  if (keys.length === 0) throw memberNotFound(text);
  if (keys.length > 1) {
    throw new AppError('CONFLICT', `${text} names several members here (${keys.join(', ')}): give the identity key`, {
      field: 'member',
    });
  }
  return keys[0]!;
}

function memberNotFound(userKey: string): AppError {
  return new AppError('NOT_FOUND', `No member ${userKey} at this brand (no event or redemption here)`, {
    field: 'userKey',
    value: userKey,
  });
}

/**
 * One member's page: their account and linked identities, wallet (on chain and pending), what they earned
 * and spent at the brand, their events (refused ones with the refusal), redemptions, streak and
 * achievements. 404 when the brand has never seen them, so other brands' members stay unknown.
 */
export async function readMemberProfile(
  deps: BrandMembersDeps,
  brandId: string,
  identityKey: string,
): Promise<MemberProfile> {
  const { accountKey, identities } = await accountIdentities(deps.db, identityKey);
  const member = memberOf(accountKey, identities);
  const keys = [...member.identityKeys];
  const { figures, ledger } = await readMemberFigures(deps.wallet, brandId, member);
  if (!ledger.known) throw memberNotFound(identityKey);
  const [events, reversals, redemptions, streaks, achievements, block] = await Promise.all([
    readMemberEvents(deps.db, brandId, keys),
    listMemberReversals(deps.db, brandId, keys, MEMBER_HISTORY_LIMIT),
    listBrandRedemptions(deps.db, brandId, { userKeys: keys, limit: MEMBER_HISTORY_LIMIT }),
    readDailyStreaks({ db: deps.db, clock: deps.clock, logger: deps.logger }, [brandId], accountKey),
    readAchievements(deps.db, brandId, accountKey),
    findMemberBlock(deps.db, brandId, keys),
  ]);
  const streak = streaks.get(brandId);
  return {
    success: true,
    userKey: identityKey,
    accountKey,
    walletAddress: figures.walletAddress,
    identities: identities.map((identity) => ({
      identityKey: identity.identityKey,
      platform: identity.platform,
      primary: identity.primary,
      linkedAt: identity.linkedAt,
    })),
    balance: { onChain: figures.onChain, pending: figures.pending, reserved: figures.reserved },
    figures,
    ledger: {
      earned: figures.earned.total,
      pendingEarned: figures.earned.pending,
      confirmedEarned: figures.earned.confirmed,
      acceptedEvents: ledger.acceptedEvents,
      redeemed: Number(ledger.redeemed),
      redeeming: Number(ledger.redeeming),
    },
    events,
    reversals,
    debt: figures.debt,
    redemptions,
    streak: {
      current: streak?.currentStreak ?? 0,
      longest: streak?.longestStreak ?? 0,
      active: streak ? !streak.lapsed && streak.currentStreak > 0 : false,
      lastActivityAt: streak?.lastActivityAt ?? null,
    },
    achievements,
    blocked: blockStateOf(block),
  };
}

const blockStateOf = (block: MemberBlock | undefined): MemberBlockState | null =>
  block ? { reason: block.reason, blockedAt: block.blockedAt.toISOString(), blockedBy: block.blockedBy } : null;

/**
 * Blocks (`reason` given) or unblocks (`reason` null) a member the brand has seen (docs/portal.md, "Members"):
 * every identity of their account is blocked, so events for any of them are refused with MEMBER_BLOCKED by the
 * event path's judge (an identity linked later is not; block again to include it). Audited as `member.block`
 * or `member.unblock`; CONFLICT when already in the asked state, 404 for a member the brand never saw.
 */
export async function setMemberBlock(
  deps: BrandMembersDeps & { events: Pick<EventService, 'brands'> },
  input: { brandId: string; userKey: string; reason: string | null; actor: string },
): Promise<{ success: true; userKey: string; blocked: MemberBlockState | null }> {
  const { accountKey, identities } = await accountIdentities(deps.db, input.userKey);
  const member = memberOf(accountKey, identities);
  const keys = [...member.identityKeys];
  const ledger = await readMemberLedger(deps.db, input.brandId, member);
  if (!ledger.known) throw memberNotFound(input.userKey);
  const now = deps.clock.now();
  const alreadyBlocked = (since: string) =>
    new AppError('CONFLICT', `${input.userKey} is already blocked (${since})`, {
      field: 'userKey',
      value: input.userKey,
    });
  const block = await deps.db.transaction().execute(async (trx) => {
    const existing = await findMemberBlock(trx, input.brandId, keys);
    if (input.reason === null) {
      if (!existing) throw new AppError('CONFLICT', `${input.userKey} is not blocked at this brand`);
      await trx
        .deleteFrom('brand_member_blocks')
        .where('brand_id', '=', input.brandId)
        .where('identity_key', 'in', keys)
        .execute();
    } else {
      if (existing) throw alreadyBlocked(`since ${existing.blockedAt.toISOString()}: ${existing.reason}`);
      // A concurrent block of the same member waits on the key and then fails here: one block, one audit entry.
      await trx
        .insertInto('brand_member_blocks')
        .values(
          keys.map((identityKey) => ({
            brand_id: input.brandId,
            identity_key: identityKey,
            account_key: accountKey,
            reason: input.reason!,
            blocked_by: input.actor,
            blocked_at: now,
          })),
        )
        .execute()
        .catch((error: unknown) => {
          throw isUniqueViolation(error) ? alreadyBlocked('by a change made a moment ago') : error;
        });
    }
    await insertAuditEntry(trx, {
      actor: input.actor,
      action: input.reason === null ? 'member.unblock' : 'member.block',
      subject: input.brandId,
      brandId: input.brandId,
      details: {
        userKey: input.userKey,
        accountKey,
        identityKeys: keys,
        ...(input.reason === null ? { wasBlockedFor: existing?.reason } : { reason: input.reason }),
      },
      at: now,
    });
    return input.reason === null ? undefined : { reason: input.reason, blockedAt: now, blockedBy: input.actor };
  });
  deps.events.brands.invalidate(input.brandId);
  deps.changes?.emit({ kind: 'brand', brandId: input.brandId });
  return { success: true, userKey: input.userKey, blocked: blockStateOf(block) };
}

/** The member's events at the brand, accepted and refused, newest first. */
async function readMemberEvents(db: Database, brandId: string, keys: string[]): Promise<MemberEvent[]> {
  const rows = await db
    .selectFrom('events')
    .select([
      'id',
      'event_type',
      'user_email',
      'status',
      'reason',
      'reward_amount',
      'sent_by',
      'created_at',
      sql<string | null>`metadata->>'reason'`.as('note'),
    ])
    .where('brand_id', '=', brandId)
    .where('user_email', 'in', keys)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(MEMBER_HISTORY_LIMIT)
    .execute();
  return rows.map((row) => ({
    eventId: row.id,
    eventType: row.event_type,
    userKey: row.user_email,
    status: row.status === 'accepted' ? 'accepted' : 'rejected',
    reason: row.status === 'accepted' ? null : row.reason,
    rewardAmount: Number(row.reward_amount),
    sentBy: row.sent_by,
    note: row.event_type === MANUAL_AWARD_EVENT_TYPE ? row.note : null,
    createdAt: new Date(row.created_at).toISOString(),
  }));
}

/**
 * A manual award: `amount` pts to a member the brand knows, for `reason`, through the event service's one
 * award entry (the batcher, the member's wallet, the mint), then written to the audit log naming `actor`.
 * `idempotencyKey` is the award's event externalId: a repeat by the same actor for the same member and amount
 * (parallel ones too) answers the first award with `replayed: true` and pays nothing; the key used for
 * another member, amount or by another person is 409.
 */
export async function awardMember(
  deps: BrandMembersDeps & { events: EventService },
  input: {
    brandId: string;
    userKey: string;
    amount: number;
    reason: string;
    actor: string;
    idempotencyKey?: string | undefined;
  },
) {
  const { accountKey, identities } = await accountIdentities(deps.db, input.userKey);
  const ledger = await readMemberLedger(deps.db, input.brandId, memberOf(accountKey, identities));
  if (!ledger.known) throw memberNotFound(input.userKey);
  const accepted = await deps.events
    .award({
      kind: 'manual',
      brandId: input.brandId,
      userEmail: accountKey,
      amount: BigInt(input.amount),
      reason: input.reason,
      awardedBy: input.actor,
      idempotencyKey: input.idempotencyKey,
    })
    .catch((error: unknown) => {
      if (isAppError(error) && error.code === 'DUPLICATE_EVENT') throw awardKeyReused(input.idempotencyKey);
      throw error;
    });
  if (accepted.duplicate && accepted.rewardAmount !== input.amount) throw awardKeyReused(input.idempotencyKey);
  if (!accepted.duplicate) {
    await insertAuditEntry(deps.db, {
      actor: input.actor,
      action: 'member.award',
      subject: input.brandId,
      details: { userKey: accountKey, amount: input.amount, reason: input.reason, eventId: accepted.eventId },
      at: deps.clock.now(),
    });
  }
  const response = await deps.events.completeEvent(accepted);
  return {
    success: true as const,
    eventId: response.eventId,
    rewardAmount: response.rewardAmount,
    walletAddress: response.walletAddress,
    mintStatus: response.mintStatus,
    ...(accepted.duplicate ? { replayed: true as const } : {}),
  };
}

/** 409: this award's idempotency key already paid another award (another member, amount or person). */
function awardKeyReused(idempotencyKey: string | undefined): AppError {
  return new AppError(
    'CONFLICT',
    `Idempotency key "${idempotencyKey}" was already used for another award at this brand (another member, amount or person): send a new key for a new award, or the same request to get the first answer again`,
    { field: 'idempotencyKey', reason: 'idempotency_key_reused' },
  );
}

/**
 * A brand's members as its team acts on them: the admin API's manual award (`pts member award`) and the brand
 * portal's Members page (search, a member's page, an award to the member shown).
 */
export interface BrandMemberService {
  /**
   * Gives `member` (an e-mail, an identity key or `platform:id` the brand has seen) pts by hand, audited as
   * `actor`; BRAND_NOT_FOUND for an unknown brand.
   */
  award(input: {
    brandId: string;
    member: string;
    amount: number;
    reason: string;
    actor: string;
    idempotencyKey?: string | undefined;
  }): ReturnType<typeof awardMember>;
  /**
   * The identity key `member` names (an e-mail, an identity key or `platform:id`); BRAND_NOT_FOUND for an unknown
   * brand (the admin API's deduction names members as the award does).
   */
  resolveKey(brandId: string, member: string): Promise<string>;
  /** At most 20 matches by e-mail, platform identity or wallet, most recently seen first. */
  search(brandId: string, text: string): Promise<MemberMatch[]>;
  /** One page of the brand's members, sorted (docs/portal.md, "Members"), maybe searched. */
  list(brandId: string, query: MemberListQuery): ReturnType<typeof listMembers>;
  /** Every member in the asked order, a batch at a time (the CSV export). */
  readAll(brandId: string, filter: MemberExportQuery): AsyncGenerator<MemberListEntry[]>;
  /** The brand's events in [from, to), oldest first, a batch at a time (the CSV export). */
  readEvents(brandId: string, window: { from: Date; to: Date }): AsyncGenerator<ExportedEvent[]>;
  /** A member's page; 404 when the brand has never seen them. */
  profile(brandId: string, identityKey: string): Promise<MemberProfile>;
  /** `amount` pts for `reason` to the member with exactly this identity key (no lookup), audited as `actor`. */
  awardKey(input: Parameters<typeof awardMember>[1]): ReturnType<typeof awardMember>;
  /** Blocks (a reason given) or unblocks (null) the member with this identity key, audited as `actor`. */
  setBlock(input: Parameters<typeof setMemberBlock>[1]): ReturnType<typeof setMemberBlock>;
}

export function createBrandMemberService(deps: BrandMembersDeps & { events: EventService }): BrandMemberService {
  return {
    award: async ({ brandId, member, ...award }) => {
      await requireBrandExists(deps.db, brandId);
      const userKey = await resolveMemberKey(deps, brandId, member);
      return awardMember(deps, { brandId, userKey, ...award });
    },
    resolveKey: async (brandId, member) => {
      await requireBrandExists(deps.db, brandId);
      return resolveMemberKey(deps, brandId, member);
    },
    search: (brandId, text) => searchMembers(deps, brandId, text),
    list: (brandId, query) => listMembers(deps.db, brandId, query),
    readAll: (brandId, filter) => readAllMembers(deps.db, brandId, filter),
    readEvents: (brandId, window) => readBrandEvents(deps.db, brandId, window),
    profile: (brandId, identityKey) => readMemberProfile(deps, brandId, identityKey),
    awardKey: (input) => awardMember(deps, input),
    setBlock: (input) => setMemberBlock(deps, input),
  };
}
