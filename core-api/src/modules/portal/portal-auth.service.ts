import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { AppError, type Clock, type PortalMembership, type PortalRole } from '@pts/shared';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { decoyHash, hashPassword, passwordMatches } from './passwords.ts';

/** How long sessions and links live (docs/portal.md, "Sessions"). */
export const PORTAL_SESSION_IDLE_MS = 8 * 3600_000;
export const PORTAL_SESSION_ABSOLUTE_MS = 7 * 24 * 3600_000;
/** `last_seen_at` is written at most this often, so reading pages does not write a row each time. */
const SEEN_RESOLUTION_MS = 60_000;
export const PORTAL_INVITE_TTL_MS = 72 * 3600_000;
export const PORTAL_RESET_TTL_MS = 3600_000;

export interface PortalAuthDeps {
  db: Kysely<DB>;
  clock: Clock;
}

export interface PortalUser {
  id: string;
  email: string;
  /** A platform operator (docs/portal.md, "Operators"). */
  operator: boolean;
}

/** A new random token (256 bits, base64url: 43 characters) and the SHA-256 the database keeps of it. */
export function newToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: tokenHash(token) };
}

export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The user whose password this is, or undefined (an unknown e-mail costs the same hashing time). */
export async function checkPassword(deps: PortalAuthDeps, email: string, password: string) {
  const user = await deps.db.selectFrom('portal_users').selectAll().where('email', '=', email).executeTakeFirst();
  const stored = user?.password_hash ?? (await decoyHash());
  const matches = await passwordMatches(stored, password);
  return user?.password_hash && matches ? { id: user.id, email: user.email, operator: user.operator } : undefined;
}

/** Opens a session for `userId`; returns the token the cookie carries. */
export async function openSession(deps: PortalAuthDeps, userId: string): Promise<string> {
  const now = deps.clock.now();
  const { token, hash } = newToken();
  await deps.db
    .insertInto('portal_sessions')
    .values({
      token_hash: hash,
      user_id: userId,
      created_at: now,
      last_seen_at: now,
      expires_at: new Date(now.getTime() + PORTAL_SESSION_ABSOLUTE_MS),
    })
    .execute();
  return token;
}

/** The session's user while the session is live (not revoked, not idle too long, not past its end). */
export async function userOfSession(deps: PortalAuthDeps, token: string): Promise<PortalUser | undefined> {
  const now = deps.clock.now();
  const hash = tokenHash(token);
  const row = await deps.db
    .selectFrom('portal_sessions as s')
    .innerJoin('portal_users as u', 'u.id', 's.user_id')
    .select(['u.id', 'u.email', 'u.operator', 's.last_seen_at', 's.expires_at', 's.revoked_at'])
    .where('s.token_hash', '=', hash)
    .executeTakeFirst();
  if (!row || row.revoked_at) return undefined;
  if (row.expires_at.getTime() <= now.getTime()) return undefined;
  if (now.getTime() - row.last_seen_at.getTime() >= PORTAL_SESSION_IDLE_MS) return undefined;
  if (now.getTime() - row.last_seen_at.getTime() >= SEEN_RESOLUTION_MS) {
    await deps.db.updateTable('portal_sessions').set({ last_seen_at: now }).where('token_hash', '=', hash).execute();
  }
  return { id: row.id, email: row.email, operator: row.operator };
}

export async function revokeSession(deps: PortalAuthDeps, token: string): Promise<void> {
  await deps.db
    .updateTable('portal_sessions')
    .set({ revoked_at: deps.clock.now() })
    .where('token_hash', '=', tokenHash(token))
    .where('revoked_at', 'is', null)
    .execute();
}

/** Ends every session of the user (password changed or reset). */
async function revokeAllSessions(db: Kysely<DB>, userId: string, at: Date): Promise<void> {
  await db
    .updateTable('portal_sessions')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Voids the user's reset links still unused: a password set another way makes them stale. */
async function voidResetLinks(db: Kysely<DB>, email: string, at: Date): Promise<void> {
  await db
    .updateTable('portal_links')
    .set({ used_at: at })
    .where('kind', '=', 'reset')
    .where('email', '=', email)
    .where('used_at', 'is', null)
    .execute();
}

/** Sets the password, ending every session the user had and voiding their pending reset links. */
export async function setPassword(deps: PortalAuthDeps, userId: string, password: string): Promise<void> {
  const passwordHash = await hashPassword(password);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const user = await trx
      .updateTable('portal_users')
      .set({ password_hash: passwordHash, password_changed_at: now })
      .where('id', '=', userId)
      .returning('email')
      .executeTakeFirst();
    await revokeAllSessions(trx, userId, now);
    if (user) await voidResetLinks(trx, user.email, now);
  });
}

/** The brands the user belongs to, with the role in each, by brand name. */
export async function membershipsOf(deps: Pick<PortalAuthDeps, 'db'>, userId: string): Promise<PortalMembership[]> {
  const rows = await deps.db
    .selectFrom('portal_memberships as m')
    .innerJoin('brands as b', 'b.address', 'm.brand_id')
    .select(['m.brand_id', 'm.role', 'b.name'])
    .where('m.user_id', '=', userId)
    .orderBy('b.name')
    .execute();
  return rows.map((row) => ({ brandId: row.brand_id, brandName: row.name, role: row.role }));
}

export interface PortalLink {
  email: string;
  brandId: string | null;
  role: PortalRole | null;
  /** An operator invite (no brand): accepting it makes the person a platform operator. */
  grantsOperator?: boolean;
}

/** Creates a single-use link; returns its token (only its hash is stored). */
export async function createLink(
  deps: PortalAuthDeps,
  link: PortalLink & { kind: 'invite' | 'reset'; createdBy: string; ttlMs: number },
): Promise<{ token: string; expiresAt: Date }> {
  const now = deps.clock.now();
  const { token, hash } = newToken();
  const expiresAt = new Date(now.getTime() + link.ttlMs);
  await deps.db
    .insertInto('portal_links')
    .values({
      token_hash: hash,
      kind: link.kind,
      email: link.email,
      brand_id: link.brandId,
      role: link.role,
      created_by: link.createdBy,
      created_at: now,
      expires_at: expiresAt,
      grants_operator: link.grantsOperator ?? false,
    })
    .execute();
  return { token, expiresAt };
}

const linkRefused = () =>
  new AppError('VALIDATION_ERROR', 'This link is invalid, expired or already used: ask for a new one', {
    field: 'token',
  });

/**
 * Uses a link once: marks it used and returns what it grants. A second use, an expired link, an unknown token
 * or a link of the other kind is refused the same way. Runs inside the caller's transaction.
 */
export async function consumeLink(trx: Kysely<DB>, kind: 'invite' | 'reset', token: string, now: Date) {
  const row = await trx
    .updateTable('portal_links')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash(token))
    .where('kind', '=', kind)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['email', 'brand_id', 'role', 'grants_operator'])
    .executeTakeFirst();
  if (!row) throw linkRefused();
  return row;
}

const accountExists = () =>
  new AppError(
    'CONFLICT',
    'This e-mail already has a pts portal account: sign in with its own password, then accept the invite (the link still works)',
    { field: 'token', reason: 'account_exists' },
  );

type ConsumedInvite = Awaited<ReturnType<typeof consumeLink>>;

/** Grants what an invite grants to `user` (the membership, or the operator flag) and writes the join to the audit log. */
async function grantInvite(
  trx: Kysely<DB>,
  link: ConsumedInvite,
  user: PortalUser,
  how: { existingAccount: boolean; now: Date },
): Promise<PortalUser> {
  if (link.grants_operator) {
    const flagged = await trx
      .updateTable('portal_users')
      .set({ operator: true })
      .where('id', '=', user.id)
      .returning(['id', 'email', 'operator'])
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('audit_log')
      .values({
        actor: `operator:${user.email}`,
        action: 'portal.operator_invite_accepted',
        subject: user.email,
        brand_id: null,
        details: JSON.stringify({ email: user.email, existingAccount: how.existingAccount }),
        created_at: how.now,
      })
      .execute();
    return flagged;
  }
  if (!link.brand_id || !link.role) throw linkRefused();
  await trx
    .insertInto('portal_memberships')
    .values({ user_id: user.id, brand_id: link.brand_id, role: link.role, created_at: how.now })
    .onConflict((conflict) => conflict.columns(['user_id', 'brand_id']).doUpdateSet({ role: link.role! }))
    .execute();
  await trx
    .insertInto('audit_log')
    .values({
      actor: `portal:${user.email}`,
      action: 'portal.invite_accepted',
      subject: link.brand_id,
      brand_id: link.brand_id,
      details: JSON.stringify({ email: user.email, role: link.role, existingAccount: how.existingAccount }),
      created_at: how.now,
    })
    .execute();
  return user;
}

/**
 * Accepts an invite for a new person: creates the account with this password, then grants the membership (or,
 * for an operator invite, the operator flag). An e-mail that already has an account is refused with 409 and the
 * link stays unused: the link's holder may be the inviter (it is shown to them when no mail server is set), so it
 * must never set an existing account's password, end its sessions or change its flags (docs/portal.md, "Invites
 * and resets: who can do what"). That person signs in with their own password and joins (`joinWithInvite`). The
 * link works once, even under concurrent uses (the UPDATE … WHERE used_at IS NULL).
 */
export async function acceptInvite(deps: PortalAuthDeps, token: string, password: string): Promise<PortalUser> {
  const passwordHash = await hashPassword(password);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const link = await consumeLink(trx, 'invite', token, now);
    const user = await trx
      .insertInto('portal_users')
      .values({
        id: randomUUID(),
        email: link.email,
        password_hash: passwordHash,
        password_changed_at: now,
        operator: false,
      })
      .onConflict((conflict) => conflict.column('email').doNothing())
      .returning(['id', 'email', 'operator'])
      .executeTakeFirst();
    // Throwing rolls the transaction back: the link stays unused for its rightful holder.
    if (!user) throw accountExists();
    return grantInvite(trx, link, user, { existingAccount: false, now });
  });
}

/**
 * Accepts an invite as the signed-in person (an existing account): they proved who they are with their own
 * password, so only the membership (or operator flag) is granted; the password, sessions and e-mail stay as they
 * are. An invite for another e-mail is refused with 403 and stays unused.
 */
export async function joinWithInvite(deps: PortalAuthDeps, token: string, user: PortalUser) {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const live = await trx
      .selectFrom('portal_links')
      .select('email')
      .where('token_hash', '=', tokenHash(token))
      .where('kind', '=', 'invite')
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (!live) throw linkRefused();
    if (live.email !== user.email) {
      throw new AppError(
        'FORBIDDEN',
        `This invite is for another e-mail address than ${user.email}: sign out, then sign in as the invited person`,
        { field: 'token', reason: 'other_email' },
      );
    }
    const link = await consumeLink(trx, 'invite', token, now);
    const joined = await grantInvite(trx, link, user, { existingAccount: true, now });
    return { user: joined, brandId: link.brand_id, role: link.role };
  });
}

/** Completes a password reset: sets the password and ends every session. */
export async function completeReset(deps: PortalAuthDeps, token: string, password: string): Promise<PortalUser> {
  const passwordHash = await hashPassword(password);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const link = await consumeLink(trx, 'reset', token, now);
    const user = await trx
      .updateTable('portal_users')
      .set({ password_hash: passwordHash, password_changed_at: now })
      .where('email', '=', link.email)
      .returning(['id', 'email', 'operator'])
      .executeTakeFirst();
    if (!user) throw linkRefused();
    await revokeAllSessions(trx, user.id, now);
    await voidResetLinks(trx, user.email, now);
    return user;
  });
}

export async function findUserByEmail(deps: Pick<PortalAuthDeps, 'db'>, email: string) {
  return deps.db.selectFrom('portal_users').select(['id', 'email']).where('email', '=', email).executeTakeFirst();
}

/**
 * The portal's accounts and sessions (docs/portal.md, "Sessions"), for its routers: sign-in, sessions,
 * passwords, invite and reset links, and the brands a user belongs to.
 */
export interface PortalAuthService {
  /** The user whose password this is, or undefined (an unknown e-mail costs the same hashing time). */
  checkPassword(email: string, password: string): Promise<PortalUser | undefined>;
  /** Opens a session; returns the token the cookie carries. */
  openSession(userId: string): Promise<string>;
  /** The session's user while the session is live. */
  userOfSession(token: string): Promise<PortalUser | undefined>;
  revokeSession(token: string): Promise<void>;
  /** Sets the password, ending every session the user had. */
  setPassword(userId: string, password: string): Promise<void>;
  /** The brands the user belongs to, with the role in each, by brand name. */
  membershipsOf(userId: string): Promise<PortalMembership[]>;
  /** Accepts an invite for a new account (409 when the e-mail has one): its password, then the grant. */
  acceptInvite(token: string, password: string): Promise<PortalUser>;
  /** Accepts an invite as the signed-in person (their e-mail must be the invite's): only the grant. */
  joinWithInvite(
    token: string,
    user: PortalUser,
  ): Promise<{ user: PortalUser; brandId: string | null; role: PortalRole | null }>;
  /** Completes a password reset: sets the password and ends every session. */
  completeReset(token: string, password: string): Promise<PortalUser>;
}

export function createPortalAuthService(deps: PortalAuthDeps): PortalAuthService {
  return {
    checkPassword: (email, password) => checkPassword(deps, email, password),
    openSession: (userId) => openSession(deps, userId),
    userOfSession: (token) => userOfSession(deps, token),
    revokeSession: (token) => revokeSession(deps, token),
    setPassword: (userId, password) => setPassword(deps, userId, password),
    membershipsOf: (userId) => membershipsOf(deps, userId),
    acceptInvite: (token, password) => acceptInvite(deps, token, password),
    joinWithInvite: (token, user) => joinWithInvite(deps, token, user),
    completeReset: (token, password) => completeReset(deps, token, password),
  };
}
