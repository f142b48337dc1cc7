import {
  AppError,
  type Clock,
  type PortalOperatorInvite,
  type PortalOperatorRemoval,
  type PortalRole,
  type PortalTeam,
} from '@pts/shared';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../../db/schema.ts';
import { findBrandByAddress, insertAuditEntry } from '../brands/brands.repository.ts';
import { getBrand } from '../brands/brands.service.ts';
import { createLink, PORTAL_INVITE_TTL_MS, PORTAL_RESET_TTL_MS } from './portal-auth.service.ts';
import type { PortalMailer } from './portal-mailer.ts';

export interface PortalTeamDeps {
  db: Kysely<DB>;
  clock: Clock;
  mailer: PortalMailer;
  /** How long an invite link works; 72 h by default. */
  inviteTtlMs?: number | undefined;
  /** Hears the failures of work done off the response path (reset e-mails). */
  logger?: Pick<Logger, 'error'> | undefined;
}

/** What each role may do (docs/portal.md, "Roles"). */
const RANK: Record<PortalRole, number> = { viewer: 0, admin: 1, owner: 2 };

/**
 * The user's role in the brand, or undefined when they are not a member. A platform operator who is not a
 * member reads every existing brand as a `viewer` (docs/portal.md, "Operators"): changes stay with its team.
 */
export async function roleIn(db: Kysely<DB>, userId: string, brandId: string): Promise<PortalRole | undefined> {
  const brand = brandId.toLowerCase();
  const row = await db
    .selectFrom('portal_users as u')
    .leftJoin('portal_memberships as m', (join) => join.onRef('m.user_id', '=', 'u.id').on('m.brand_id', '=', brand))
    .select(['m.role', 'u.operator'])
    .where('u.id', '=', userId)
    .executeTakeFirst();
  if (row?.role) return row.role;
  if (row?.operator && (await findBrandByAddress(db, brand))) return 'viewer';
  return undefined;
}

/**
 * The user's role, when at least `needed`. A non-member gets 404 (the brand's existence stays hidden from
 * people outside it); a member with a lesser role gets 403.
 */
export async function requireRole(
  db: Kysely<DB>,
  userId: string,
  brandId: string,
  needed: PortalRole,
): Promise<PortalRole> {
  const role = await roleIn(db, userId, brandId);
  if (!role) throw new AppError('BRAND_NOT_FOUND', `Brand not found: ${brandId}`);
  if (RANK[role] < RANK[needed]) {
    throw new AppError('FORBIDDEN', `Your role in this brand (${role}) cannot do this; it needs ${needed}`);
  }
  return role;
}

/** `{base}/portal/invite#token=…`: the token rides in the fragment, so it never reaches a server log or Referer. */
export function portalLinkUrl(baseUrl: string, page: 'invite' | 'reset', token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/portal/${page}#token=${token}`;
}

/** Invites `email` into the brand with `role`; the link is e-mailed (or logged) and returned. */
export async function inviteMember(
  deps: PortalTeamDeps,
  input: { brandId: string; email: string; role: PortalRole; invitedBy: string; baseUrl: string },
) {
  const brand = await getBrand(deps, input.brandId);
  const { token, expiresAt } = await createLink(deps, {
    kind: 'invite',
    email: input.email,
    brandId: brand.brandId,
    role: input.role,
    createdBy: input.invitedBy,
    ttlMs: deps.inviteTtlMs ?? PORTAL_INVITE_TTL_MS,
  });
  await insertAuditEntry(deps.db, {
    actor: input.invitedBy,
    action: 'portal.invite',
    subject: brand.brandId,
    details: { email: input.email, role: input.role, expiresAt: expiresAt.toISOString() },
    at: deps.clock.now(),
  });
  const inviteUrl = portalLinkUrl(input.baseUrl, 'invite', token);
  await deps.mailer.send({
    to: input.email,
    subject: `You are invited to ${brand.name} on pts`,
    text: `You are invited to run ${brand.name}'s loyalty program as ${input.role}.\n\nSet your password and sign in: ${inviteUrl}\n\nThe link works once and expires ${expiresAt.toISOString()}.`,
    link: inviteUrl,
  });
  return {
    email: input.email,
    brandId: brand.brandId,
    role: input.role,
    inviteUrl,
    expiresAt: expiresAt.toISOString(),
  };
}

/**
 * Invites `email` to become a platform operator (docs/portal.md, "Operators"): only with the admin token
 * (`pts portal invite --operator`). The link is e-mailed (or logged) and returned.
 */
export async function inviteOperator(
  deps: PortalTeamDeps,
  input: { email: string; invitedBy: string; baseUrl: string },
): Promise<PortalOperatorInvite> {
  const { token, expiresAt } = await createLink(deps, {
    kind: 'invite',
    email: input.email,
    brandId: null,
    role: null,
    grantsOperator: true,
    createdBy: input.invitedBy,
    ttlMs: deps.inviteTtlMs ?? PORTAL_INVITE_TTL_MS,
  });
  await insertAuditEntry(deps.db, {
    actor: input.invitedBy,
    action: 'portal.operator_invite',
    subject: input.email,
    details: { email: input.email, expiresAt: expiresAt.toISOString() },
    at: deps.clock.now(),
  });
  const inviteUrl = portalLinkUrl(input.baseUrl, 'invite', token);
  await deps.mailer.send({
    to: input.email,
    subject: 'You are invited to operate pts',
    text: `You are invited into the pts portal as a platform operator: you will see every brand, create brands and invite their owners.\n\nSet your password and sign in: ${inviteUrl}\n\nThe link works once and expires ${expiresAt.toISOString()}.`,
    link: inviteUrl,
  });
  return { email: input.email, operator: true, inviteUrl, expiresAt: expiresAt.toISOString() };
}

/**
 * Takes the operator flag from `email` (`pts portal remove-operator`, admin token only) and revokes the
 * operator invites still pending for it, so none can grant it back. Their next request already sees the flag
 * gone (sessions read it from the user); brand memberships stay. 404 when `email` is neither an operator nor
 * invited as one. Audited as `portal.operator_remove`.
 */
export async function removeOperator(
  deps: Pick<PortalTeamDeps, 'db' | 'clock'>,
  input: { email: string; removedBy: string },
): Promise<PortalOperatorRemoval> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const removed = await trx
      .updateTable('portal_users')
      .set({ operator: false })
      .where('email', '=', input.email)
      .where('operator', '=', true)
      .returning('id')
      .executeTakeFirst();
    const revoked = await trx
      .updateTable('portal_links')
      .set({ used_at: now })
      .where('email', '=', input.email)
      .where('kind', '=', 'invite')
      .where('grants_operator', '=', true)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    const invitesRevoked = Number(revoked.numUpdatedRows);
    if (!removed && invitesRevoked === 0) {
      throw new AppError(
        'NOT_FOUND',
        `${input.email} is not a platform operator and has no pending operator invite (pts portal invite --operator makes one)`,
        { field: 'email' },
      );
    }
    await insertAuditEntry(trx, {
      actor: input.removedBy,
      action: 'portal.operator_remove',
      subject: input.email,
      details: { email: input.email, wasOperator: removed !== undefined, invitesRevoked },
      at: now,
    });
    return { email: input.email, operator: false, wasOperator: removed !== undefined, invitesRevoked };
  });
}

/**
 * Sends a reset link when the e-mail belongs to a user, and voids every older reset link of that user, so only
 * the newest works. The user's row is locked while the link is made, so two requests at once leave one live link.
 * Called off the response path (`startPasswordReset`): the answer never waits for this lookup or the mail.
 */
export async function requestPasswordReset(deps: PortalTeamDeps, email: string, baseUrl: string): Promise<void> {
  const now = deps.clock.now();
  const made = await deps.db.transaction().execute(async (trx) => {
    const user = await trx
      .selectFrom('portal_users')
      .select(['id', 'email'])
      .where('email', '=', email)
      .forUpdate()
      .executeTakeFirst();
    if (!user) return undefined;
    await trx
      .updateTable('portal_links')
      .set({ used_at: now })
      .where('kind', '=', 'reset')
      .where('email', '=', user.email)
      .where('used_at', 'is', null)
      .execute();
    const { token } = await createLink(
      { db: trx, clock: deps.clock },
      {
        kind: 'reset',
        email: user.email,
        brandId: null,
        role: null,
        createdBy: `portal:${user.email}`,
        ttlMs: PORTAL_RESET_TTL_MS,
      },
    );
    return { email: user.email, token };
  });
  if (!made) return;
  const link = portalLinkUrl(baseUrl, 'reset', made.token);
  await deps.mailer.send({
    to: made.email,
    subject: 'Reset your pts portal password',
    text: `Set a new password: ${link}\n\nThe link works once, for one hour, and only until a newer one is sent. If you did not ask for it, ignore this message.`,
    link,
  });
}

export async function listTeam(deps: Pick<PortalTeamDeps, 'db' | 'clock'>, brandId: string): Promise<PortalTeam> {
  const members = await deps.db
    .selectFrom('portal_memberships as m')
    .innerJoin('portal_users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.email', 'm.role', 'm.created_at'])
    .where('m.brand_id', '=', brandId)
    .orderBy('u.email')
    .execute();
  const invites = await deps.db
    .selectFrom('portal_links')
    .select(['email', 'role', 'expires_at'])
    .where('brand_id', '=', brandId)
    .where('kind', '=', 'invite')
    .where('used_at', 'is', null)
    .where('expires_at', '>', deps.clock.now())
    .orderBy('created_at', 'desc')
    .execute();
  return {
    members: members.map((m) => ({ userId: m.id, email: m.email, role: m.role, since: m.created_at.toISOString() })),
    pendingInvites: invites.map((i) => ({
      email: i.email,
      role: i.role ?? 'viewer',
      expiresAt: i.expires_at.toISOString(),
    })),
  };
}

/** One row of a brand's team, locked for the change being made. */
interface LockedMember {
  user_id: string;
  role: PortalRole;
  email: string;
}

/**
 * The brand's team, every membership row locked (FOR UPDATE): two owners changing each other at once are
 * ordered, and the second sees the first's change. `actorUserId`, when given, must still be an owner in what
 * was locked, so a person removed or demoted a moment ago cannot finish a change they began as owner.
 */
async function lockTeam(trx: Kysely<DB>, brandId: string, actorUserId?: string): Promise<LockedMember[]> {
  const members = await trx
    .selectFrom('portal_memberships as m')
    .innerJoin('portal_users as u', 'u.id', 'm.user_id')
    .select(['m.user_id', 'm.role', 'u.email'])
    .where('m.brand_id', '=', brandId)
    .orderBy('m.user_id')
    .forUpdate()
    .execute();
  if (actorUserId !== undefined) {
    const actor = members.find((m) => m.user_id === actorUserId);
    if (!actor) throw new AppError('BRAND_NOT_FOUND', `Brand not found: ${brandId}`);
    if (actor.role !== 'owner') {
      throw new AppError('FORBIDDEN', `Your role in this brand (${actor.role}) cannot do this; it needs owner`);
    }
  }
  return members;
}

const LAST_OWNER = 'A brand needs at least one owner: make someone else owner first';

/**
 * Voids the invites into the brand still pending for `member`: those addressed to them (a role they were
 * given must not come back through an older link), and, when they are no longer an owner, those they sent
 * (only owners invite; a link a demoted or departed owner sent, perhaps to themselves, must not outlive
 * their role). Returns how many were voided.
 */
async function voidInvitesOf(
  trx: Kysely<DB>,
  input: { brandId: string; email: string; stillOwner: boolean },
  now: Date,
): Promise<number> {
  const voided = await trx
    .updateTable('portal_links')
    .set({ used_at: now })
    .where('brand_id', '=', input.brandId)
    .where('kind', '=', 'invite')
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where((eb) =>
      input.stillOwner
        ? eb('email', '=', input.email)
        : eb.or([eb('email', '=', input.email), eb('created_by', '=', `portal:${input.email}`)]),
    )
    .executeTakeFirst();
  return Number(voided.numUpdatedRows);
}

/**
 * Changes a member's role; a brand always keeps at least one owner. The member's pending invites into the
 * brand are voided (and those they sent, when they stop being owner).
 */
export async function changeRole(
  deps: Pick<PortalTeamDeps, 'db' | 'clock'>,
  input: { brandId: string; userId: string; role: PortalRole; changedBy: string; actorUserId?: string | undefined },
) {
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const members = await lockTeam(trx, input.brandId, input.actorUserId);
    const member = members.find((m) => m.user_id === input.userId);
    if (!member) throw new AppError('NOT_FOUND', `No member ${input.userId} in this brand`);
    const owners = members.filter((m) => m.role === 'owner').length;
    if (member.role === 'owner' && input.role !== 'owner' && owners <= 1) {
      throw new AppError('CONFLICT', LAST_OWNER);
    }
    await trx
      .updateTable('portal_memberships')
      .set({ role: input.role })
      .where('brand_id', '=', input.brandId)
      .where('user_id', '=', input.userId)
      .execute();
    const invitesRevoked = await voidInvitesOf(
      trx,
      { brandId: input.brandId, email: member.email, stillOwner: input.role === 'owner' },
      now,
    );
    await insertAuditEntry(trx, {
      actor: input.changedBy,
      action: 'portal.role_change',
      subject: input.brandId,
      details: { userId: input.userId, email: member.email, from: member.role, to: input.role, invitesRevoked },
      at: now,
    });
    return { userId: input.userId, role: input.role };
  });
}

/** What removing a person from a brand's team did. */
export interface TeamRemoval {
  userId: string;
  email: string;
  role: PortalRole;
  invitesRevoked: number;
}

/**
 * Takes `userId` out of the brand's team (an owner removing a teammate, or a person leaving): their next
 * request to the brand answers 404. The last owner stays (409). Their pending invites into the brand, and
 * those they sent, are voided. Audited as `portal.member_remove` or `portal.leave`.
 */
export async function removeMember(
  deps: Pick<PortalTeamDeps, 'db' | 'clock'>,
  input: { brandId: string; userId: string; actor: string; actorUserId: string },
): Promise<TeamRemoval> {
  const leaving = input.actorUserId === input.userId;
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const members = await lockTeam(trx, input.brandId, leaving ? undefined : input.actorUserId);
    const member = members.find((m) => m.user_id === input.userId);
    if (!member) {
      if (leaving) throw new AppError('BRAND_NOT_FOUND', `Brand not found: ${input.brandId}`);
      throw new AppError('NOT_FOUND', `No member ${input.userId} in this brand`);
    }
    const owners = members.filter((m) => m.role === 'owner').length;
    if (member.role === 'owner' && owners <= 1) {
      throw new AppError(
        'CONFLICT',
        leaving ? 'You are the last owner of this brand: make someone else owner before you leave' : LAST_OWNER,
      );
    }
    await trx
      .deleteFrom('portal_memberships')
      .where('brand_id', '=', input.brandId)
      .where('user_id', '=', input.userId)
      .execute();
    const invitesRevoked = await voidInvitesOf(
      trx,
      { brandId: input.brandId, email: member.email, stillOwner: false },
      now,
    );
    await insertAuditEntry(trx, {
      actor: input.actor,
      action: leaving ? 'portal.leave' : 'portal.member_remove',
      subject: input.brandId,
      details: { userId: member.user_id, email: member.email, role: member.role, invitesRevoked },
      at: now,
    });
    return { userId: member.user_id, email: member.email, role: member.role, invitesRevoked };
  });
}

/**
 * Voids the brand's pending invites to `email` (an owner changed their mind, or the link went astray).
 * 404 when there is none. Audited as `portal.invite_revoke`.
 */
export async function revokeInvite(
  deps: Pick<PortalTeamDeps, 'db' | 'clock'>,
  input: { brandId: string; email: string; revokedBy: string },
): Promise<{ email: string; invitesRevoked: number }> {
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const voided = await trx
      .updateTable('portal_links')
      .set({ used_at: now })
      .where('brand_id', '=', input.brandId)
      .where('kind', '=', 'invite')
      .where('email', '=', input.email)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    const invitesRevoked = Number(voided.numUpdatedRows);
    if (invitesRevoked === 0) {
      throw new AppError('NOT_FOUND', `No pending invite for ${input.email} in this brand`, { field: 'email' });
    }
    await insertAuditEntry(trx, {
      actor: input.revokedBy,
      action: 'portal.invite_revoke',
      subject: input.brandId,
      details: { email: input.email, invitesRevoked },
      at: now,
    });
    return { email: input.email, invitesRevoked };
  });
}

/**
 * Ends every session of a teammate (a lost laptop, a shared browser): their next request answers 401 and
 * they sign in again. Only a member of this brand (404 otherwise). Audited as `portal.sessions_end`.
 */
export async function endSessions(
  deps: Pick<PortalTeamDeps, 'db' | 'clock'>,
  input: { brandId: string; userId: string; endedBy: string },
): Promise<{ userId: string; sessionsEnded: number }> {
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const member = await trx
      .selectFrom('portal_memberships as m')
      .innerJoin('portal_users as u', 'u.id', 'm.user_id')
      .select(['u.email'])
      .where('m.brand_id', '=', input.brandId)
      .where('m.user_id', '=', input.userId)
      .executeTakeFirst();
    if (!member) throw new AppError('NOT_FOUND', `No member ${input.userId} in this brand`);
    const ended = await trx
      .updateTable('portal_sessions')
      .set({ revoked_at: now })
      .where('user_id', '=', input.userId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    const sessionsEnded = Number(ended.numUpdatedRows);
    await insertAuditEntry(trx, {
      actor: input.endedBy,
      action: 'portal.sessions_end',
      subject: input.brandId,
      details: { userId: input.userId, email: member.email, sessionsEnded },
      at: now,
    });
    return { userId: input.userId, sessionsEnded };
  });
}

/** A brand's portal team in numbers (the operators' brand list). */
export interface TeamCounts {
  owners: number;
  members: number;
  pendingOwnerInvites: number;
}

/** Team counts of every brand with a member or a live invite; the others have none. Two grouped statements. */
export async function readTeamCountsByBrand(
  deps: Pick<PortalTeamDeps, 'db' | 'clock'>,
): Promise<Map<string, TeamCounts>> {
  const counts = new Map<string, TeamCounts>();
  const of = (brandId: string) => {
    const entry = counts.get(brandId) ?? { owners: 0, members: 0, pendingOwnerInvites: 0 };
    counts.set(brandId, entry);
    return entry;
  };
  const members = await deps.db
    .selectFrom('portal_memberships')
    .select(['brand_id', (eb) => eb.fn.countAll<number>().as('members')])
    .select((eb) => eb.fn.count<number>(eb.case().when('role', '=', 'owner').then(1).end()).as('owners'))
    .groupBy('brand_id')
    .execute();
  for (const row of members)
    Object.assign(of(row.brand_id), { members: Number(row.members), owners: Number(row.owners) });
  const invites = await deps.db
    .selectFrom('portal_links')
    .select(['brand_id', (eb) => eb.fn.countAll<number>().as('pending')])
    .where('kind', '=', 'invite')
    .where('role', '=', 'owner')
    .where('used_at', 'is', null)
    .where('expires_at', '>', deps.clock.now())
    .where('brand_id', 'is not', null)
    .groupBy('brand_id')
    .execute();
  for (const row of invites) if (row.brand_id) of(row.brand_id).pendingOwnerInvites = Number(row.pending);
  return counts;
}

/**
 * A brand's portal team (docs/portal.md, "Roles" and "Operators"), for the portal's routers: role checks,
 * invites, password reset links, the team and its roles, and the operator flag.
 */
export interface PortalTeamService {
  /** `mail` when links are e-mailed; `log` when no mail server is set (answers may then show the link). */
  readonly mailKind: PortalMailer['kind'];
  /** The user's role, when at least `needed`: 404 for a non-member, 403 for a lesser role. */
  requireRole(userId: string, brandId: string, needed: PortalRole): Promise<PortalRole>;
  inviteMember(input: Parameters<typeof inviteMember>[1]): ReturnType<typeof inviteMember>;
  inviteOperator(input: Parameters<typeof inviteOperator>[1]): Promise<PortalOperatorInvite>;
  removeOperator(input: Parameters<typeof removeOperator>[1]): Promise<PortalOperatorRemoval>;
  /**
   * Starts a password reset off the response path and returns at once, whether or not the e-mail has an account:
   * the lookup, the link and the mail happen after the answer (no enumeration by timing).
   */
  startPasswordReset(email: string, baseUrl: string): void;
  /** Resolves when every reset started so far is done (tests; the platform's stop). */
  settle(): Promise<void>;
  listTeam(brandId: string): Promise<PortalTeam>;
  /** Changes a member's role; a brand always keeps at least one owner; their pending invites are voided. */
  changeRole(input: Parameters<typeof changeRole>[1]): ReturnType<typeof changeRole>;
  /** Takes a person out of the team (or lets them leave); the last owner stays. */
  removeMember(input: Parameters<typeof removeMember>[1]): Promise<TeamRemoval>;
  /** Voids the brand's pending invites to an e-mail. */
  revokeInvite(input: Parameters<typeof revokeInvite>[1]): ReturnType<typeof revokeInvite>;
  /** Ends every session of a teammate. */
  endSessions(input: Parameters<typeof endSessions>[1]): ReturnType<typeof endSessions>;
}

export function createPortalTeamService(deps: PortalTeamDeps): PortalTeamService {
  const running = new Set<Promise<void>>();
  return {
    mailKind: deps.mailer.kind,
    requireRole: (userId, brandId, needed) => requireRole(deps.db, userId, brandId, needed),
    inviteMember: (input) => inviteMember(deps, input),
    inviteOperator: (input) => inviteOperator(deps, input),
    removeOperator: (input) => removeOperator(deps, input),
    startPasswordReset: (email, baseUrl) => {
      const work = requestPasswordReset(deps, email, baseUrl)
        // Never the link or the token: only that a reset failed and why.
        .catch((error: unknown) => deps.logger?.error({ err: error }, 'portal password reset e-mail failed'))
        .finally(() => running.delete(work));
      running.add(work);
    },
    settle: async () => {
      await Promise.all([...running]);
    },
    listTeam: (brandId) => listTeam(deps, brandId),
    changeRole: (input) => changeRole(deps, input),
    removeMember: (input) => removeMember(deps, input),
    revokeInvite: (input) => revokeInvite(deps, input),
    endSessions: (input) => endSessions(deps, input),
  };
}
