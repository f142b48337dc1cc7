import {
  AppError,
  auditPageSchema,
  auditQuerySchema,
  brandSchema,
  portalAcceptInviteRequestSchema,
  portalAdminInviteRequestSchema,
  portalBrandParamsSchema,
  portalChangePasswordSchema,
  portalInviteParamsSchema,
  portalInviteRequestSchema,
  portalInviteRevocationSchema,
  portalInviteSchema,
  portalInviteSentSchema,
  portalJoinedSchema,
  portalJoinInviteRequestSchema,
  portalMemberParamsSchema,
  portalMemberRoleRequestSchema,
  portalResetCompleteSchema,
  portalResetRequestSchema,
  portalSessionSchema,
  portalSessionsEndedSchema,
  portalSignInRequestSchema,
  portalTeamRemovalSchema,
  portalTeamSchema,
  ruleParamsSchema,
  ruleSchema,
  setRuleRequestSchema,
} from '@pts/shared';
import type { Request, Response } from 'express';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { z } from 'zod';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { BrandAdminService } from '../brands/brand-admin.service.ts';
import { PORTAL_SESSION_ABSOLUTE_MS, type PortalAuthService, type PortalUser } from './portal-auth.service.ts';
import {
  clearCookie,
  csrfTokenFor,
  portalUserOf,
  readCookie,
  requireBrandRole,
  requireSession,
  SESSION_COOKIE,
  setCookie,
} from './portal-session.ts';
import type { PortalTeamService } from './portal-team.service.ts';

/** Failed sign-ins allowed per account and per IP in SIGN_IN_WINDOW_SECONDS before sign-in answers 429. */
export const SIGN_IN_FAILURES_PER_ACCOUNT = 5;
export const SIGN_IN_FAILURES_PER_IP = 30;
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;
/** Password reset requests allowed per e-mail and per IP in RESET_WINDOW_SECONDS before 429. */
export const RESET_REQUESTS_PER_ACCOUNT = 3;
export const RESET_REQUESTS_PER_IP = 10;
export const RESET_WINDOW_SECONDS = 3600;

/** One attempt taken from a limit: `allowed` attempts pass in the limit's window. */
interface Attempt {
  limiter: RateLimiterAbstract;
  key: string;
  allowed: number;
}

/**
 * Takes one attempt from each limit before the work they guard (hashing a password, sending a mail), so
 * parallel requests cannot all pass a check made before any of them counted (issue 33 §6): each consume is one
 * atomic increment in the store. Throws `refuse(retryAfterSeconds)` when any limit is spent.
 */
async function spendAttempts(attempts: Attempt[], refuse: (retryAfter: number) => AppError): Promise<void> {
  let waitMs = 0;
  for (const { limiter, key, allowed } of attempts) {
    const state = await limiter.consume(key, 1).catch((rejected: unknown) => {
      if (rejected instanceof RateLimiterRes) return rejected;
      throw rejected;
    });
    if (state.consumedPoints > allowed) waitMs = Math.max(waitMs, state.msBeforeNext, 1);
  }
  if (waitMs > 0) throw refuse(Math.max(1, Math.ceil(waitMs / 1000)));
}

/** Gives back the attempts of a request that succeeded: only failures count against the limits. */
async function refundAttempts(attempts: Attempt[]): Promise<void> {
  for (const { limiter, key } of attempts) await limiter.reward(key, 1);
}

/** A password check's attempts: per account (first) and per IP. */
function signInAttempts(failures: PortalRoutesDeps['signInFailures'], email: string, req: Request): Attempt[] {
  return [
    { limiter: failures.account, key: `account:${email}`, allowed: SIGN_IN_FAILURES_PER_ACCOUNT },
    { limiter: failures.ip, key: `ip:${req.ip ?? 'unknown'}`, allowed: SIGN_IN_FAILURES_PER_IP },
  ];
}

const signInRefused = (retryAfter: number, what = 'failed sign-ins') =>
  new AppError(
    'RATE_LIMIT_EXCEEDED',
    `Too many ${what}: try again in ${retryAfter} s or reset your password`,
    { reason: 'sign_in_failures' },
    { retryAfter },
  );

export interface PortalRoutesDeps {
  auth: PortalAuthService;
  team: PortalTeamService;
  brands: BrandAdminService;
  /**
   * Password checks, keyed `account:<email>` and `ip:<address>` (compose.ts builds both over the shared store):
   * each check takes an attempt first, a success gives it back.
   */
  signInFailures: { account: RateLimiterAbstract; ip: RateLimiterAbstract };
  /** Password reset requests, keyed `account:<email>` and `ip:<address>`. */
  resetRequests: { account: RateLimiterAbstract; ip: RateLimiterAbstract };
  publicUrl?: string | undefined;
}

const session: ['portalSession'] = ['portalSession'];
const ok = z.object({ success: z.literal(true) });
const signedOut = failure('Not signed in (no session, or it ended)');
const csrfOrRole = failure('Missing CSRF token, or the role cannot make this change');
const notMember = failure('No such brand among yours');

/**
 * The base of every link the portal hands out (invite and reset links, snippets, checkout returns):
 * `PTS_PUBLIC_URL`, else the address this connection reached the server on (the listening socket's own address
 * and port, e.g. `http://127.0.0.1:3000`). Never the `Host` or `X-Forwarded-*` headers: whoever sends the request
 * writes those, and a reset link built from them carries its token to their site (issue 33 §5). Behind a proxy,
 * set `PTS_PUBLIC_URL`.
 */
export function baseUrlOf(req: Request, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl;
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  return `http://${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort}`;
}

/** Who the audit log names for a portal user's change. */
export const actorOf = (user: PortalUser) => `portal:${user.email}`;

/**
 * The brand portal's JSON API, mounted at `/portal/api` behind the CSRF check (docs/portal.md). Sign-in,
 * invites and resets are public; everything else needs a session, and brand routes a membership: a brand
 * the user is not in answers 404, a change beyond the user's role 403.
 */
export function portalRoutes(deps: PortalRoutesDeps): Route[] {
  const { auth, team, brands } = deps;
  const signedIn = [requireSession(auth)];
  /** Changes by an admin or owner, or by an owner: a viewer is refused before the body is read (403 before 400). */
  const asAdmin = [...signedIn, requireBrandRole(team, 'admin')];
  const asOwner = [...signedIn, requireBrandRole(team, 'owner')];
  const startSession = async (req: Request, res: Response, user: PortalUser) => {
    const token = await auth.openSession(user.id);
    setCookie(req, res, SESSION_COOKIE, token, PORTAL_SESSION_ABSOLUTE_MS / 1000);
  };

  return [
    defineRoute({
      method: 'get',
      path: '/session',
      summary: 'Who is signed in, their brands, and the CSRF token changes must carry',
      tags: ['portal'],
      responses: { 200: { description: 'Session (signedIn false when there is none)', schema: portalSessionSchema } },
      handle: async ({ req, res }) => {
        res.setHeader('Cache-Control', 'no-store');
        const csrfToken = csrfTokenFor(req, res);
        const token = readCookie(req, SESSION_COOKIE);
        const user = token ? await auth.userOfSession(token) : undefined;
        if (!user) return { signedIn: false, csrfToken, user: null, brands: [] };
        return { signedIn: true, csrfToken, user, brands: await auth.membershipsOf(user.id) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sign-in',
      summary: 'Sign in with e-mail and password',
      description: `Throttled: ${SIGN_IN_FAILURES_PER_ACCOUNT} failures per account and ${SIGN_IN_FAILURES_PER_IP} per IP in 15 minutes.`,
      tags: ['portal'],
      request: { body: portalSignInRequestSchema },
      responses: {
        200: { description: 'Signed in; the session cookie is set', schema: ok },
        400: failure('Validation failed'),
        401: failure('Wrong e-mail or password (the same answer for an unknown e-mail)'),
        403: failure('Missing CSRF token'),
        429: failure('Too many attempts for this account or IP'),
      },
      handle: async ({ body, req, res }) => {
        const attempts = signInAttempts(deps.signInFailures, body.email, req);
        await spendAttempts(attempts, (retryAfter) => signInRefused(retryAfter));
        const user = await auth.checkPassword(body.email, body.password);
        if (!user) throw new AppError('UNAUTHORIZED', 'Wrong e-mail or password');
        await refundAttempts(attempts);
        await startSession(req, res, user);
        return { success: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sign-out',
      summary: 'Sign out: the session ends on the server',
      tags: ['portal'],
      responses: { 200: { description: 'Signed out', schema: ok }, 403: failure('Missing CSRF token') },
      handle: async ({ req, res }) => {
        const token = readCookie(req, SESSION_COOKIE);
        if (token) await auth.revokeSession(token);
        clearCookie(req, res, SESSION_COOKIE);
        return { success: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/invites/accept',
      summary: 'Accept an invite as a new person: set the password and sign in (the link works once)',
      description:
        'Only for an e-mail with no account yet. An existing account is never changed by a link: 409, the link stays unused, and the person signs in with their own password and calls `POST /invites/join`.',
      tags: ['portal'],
      request: { body: portalAcceptInviteRequestSchema },
      responses: {
        200: { description: 'Signed in', schema: ok },
        400: failure('Password too short, or the link is invalid, expired or used'),
        403: failure('Missing CSRF token'),
        409: failure('The e-mail already has an account: sign in, then accept with `POST /invites/join`'),
      },
      handle: async ({ body, req, res }) => {
        const user = await auth.acceptInvite(body.token, body.password);
        await startSession(req, res, user);
        return { success: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/invites/join',
      summary: "Accept an invite as the signed-in person (an existing account): the brand's membership, nothing else",
      description:
        "The invite must be for the signed-in person's e-mail (403 otherwise, the link stays unused). The password, sessions and e-mail stay as they are; the join is in the brand's audit log.",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { body: portalJoinInviteRequestSchema },
      responses: {
        200: { description: 'Joined', schema: portalJoinedSchema },
        400: failure('The link is invalid, expired or used'),
        401: signedOut,
        403: failure('Missing CSRF token, or the invite is for another e-mail'),
      },
      handle: async ({ body, res }) => {
        const joined = await auth.joinWithInvite(body.token, portalUserOf(res));
        return { success: true, brandId: joined.brandId, role: joined.role, operator: joined.user.operator };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/password-reset',
      summary: 'Ask for a password reset link (the same answer whether or not the e-mail has an account)',
      tags: ['portal'],
      request: { body: portalResetRequestSchema },
      responses: {
        202: { description: 'If the e-mail has an account, a link is on its way', schema: ok },
        400: failure('Validation failed'),
        403: failure('Missing CSRF token'),
        429: failure(
          `More than ${RESET_REQUESTS_PER_ACCOUNT} requests for the e-mail or ${RESET_REQUESTS_PER_IP} from the IP in an hour`,
        ),
      },
      handle: async ({ body, req, res }) => {
        // The limits count every e-mail alike (known or not) and the lookup runs after the answer: the answer and
        // its timing say nothing about the account.
        await spendAttempts(
          [
            { limiter: deps.resetRequests.account, key: `account:${body.email}`, allowed: RESET_REQUESTS_PER_ACCOUNT },
            { limiter: deps.resetRequests.ip, key: `ip:${req.ip ?? 'unknown'}`, allowed: RESET_REQUESTS_PER_IP },
          ],
          (retryAfter) =>
            new AppError(
              'RATE_LIMIT_EXCEEDED',
              `Too many password reset requests for this e-mail or from this address: try again in ${retryAfter} s (a link already sent still works until a newer one is sent)`,
              { reason: 'reset_requests' },
              { retryAfter },
            ),
        );
        team.startPasswordReset(body.email, baseUrlOf(req, deps.publicUrl));
        res.status(202);
        return { success: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/password-reset/complete',
      summary: 'Set a new password with a reset link; every session ends and a new one starts',
      tags: ['portal'],
      request: { body: portalResetCompleteSchema },
      responses: {
        200: { description: 'Signed in', schema: ok },
        400: failure('Password too short, or the link is invalid, expired or used'),
        403: failure('Missing CSRF token'),
      },
      handle: async ({ body, req, res }) => {
        const user = await auth.completeReset(body.token, body.password);
        await startSession(req, res, user);
        return { success: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/password',
      summary: 'Change the password: every session of the user ends, this browser gets a new one',
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { body: portalChangePasswordSchema },
      responses: {
        200: { description: 'Changed', schema: ok },
        400: failure('Validation failed, or the current password is wrong'),
        401: signedOut,
        403: failure('Missing CSRF token'),
        429: failure(`More than ${SIGN_IN_FAILURES_PER_ACCOUNT} wrong passwords for the account in 15 minutes`),
      },
      handle: async ({ body, req, res }) => {
        const user = portalUserOf(res);
        // The current password is guessed like a sign-in: the same per-account limit, taken before hashing.
        const attempts = signInAttempts(deps.signInFailures, user.email, req).slice(0, 1);
        await spendAttempts(attempts, (retryAfter) => signInRefused(retryAfter, 'wrong current passwords'));
        if (!(await auth.checkPassword(user.email, body.currentPassword))) {
          throw new AppError('VALIDATION_ERROR', 'The current password is wrong', { field: 'currentPassword' });
        }
        await refundAttempts(attempts);
        await auth.setPassword(user.id, body.newPassword);
        await startSession(req, res, user);
        return { success: true };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId',
      summary: 'One of your brands',
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: {
        200: { description: 'Brand', schema: z.object({ success: z.literal(true), brand: brandSchema }) },
        401: signedOut,
        404: notMember,
      },
      handle: async ({ params: { brandId }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        return { success: true, brand: await brands.get(brandId) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/rules',
      summary: "The brand's event rules, active or paused",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: {
        200: { description: 'Rules', schema: z.object({ success: z.literal(true), rules: z.array(ruleSchema) }) },
        401: signedOut,
        404: notMember,
      },
      handle: async ({ params: { brandId }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        return { success: true, rules: await brands.rules(brandId) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/brands/:brandId/rules/:eventType',
      summary: 'Create, change, pause or resume a rule (admin or owner); the same service as `pts rule set`',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: ruleParamsSchema, body: setRuleRequestSchema },
      responses: {
        200: { description: 'Rule', schema: z.object({ success: z.literal(true), rule: ruleSchema }) },
        400: failure('Validation failed'),
        401: signedOut,
        403: csrfOrRole,
        404: notMember,
      },
      handle: async ({ params: { brandId, eventType }, body, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        return { success: true, rule: await brands.setRule(brandId, { ...body, eventType }, { actor: actorOf(user) }) };
      },
    }),
    ...(['archive', 'restore'] as const).map((change) =>
      defineRoute({
        method: 'post',
        path: `/brands/:brandId/rules/:eventType/${change}`,
        summary:
          change === 'archive'
            ? 'Archive a rule (admin or owner): its events are refused with RULE_ARCHIVED'
            : 'Restore an archived rule (admin or owner): it comes back paused; resume it to earn again',
        description: `Audited as \`rule.${change}\`.`,
        tags: ['portal'],
        security: session,
        before: asAdmin,
        request: { params: ruleParamsSchema },
        responses: {
          200: {
            description: change === 'archive' ? 'Archived' : 'Restored',
            schema: z.object({ success: z.literal(true), rule: ruleSchema }),
          },
          400: failure('Validation failed'),
          401: signedOut,
          403: csrfOrRole,
          404: failure('No such brand among yours, or no such rule in it'),
          409: failure(change === 'archive' ? 'Already archived' : 'Not archived'),
        },
        handle: async ({ params: { brandId, eventType }, res }) => {
          const user = portalUserOf(res);
          await team.requireRole(user.id, brandId, 'admin');
          return {
            success: true as const,
            rule: await brands.archiveRule(brandId, eventType, change === 'archive', { actor: actorOf(user) }),
          };
        },
      }),
    ),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/team',
      summary: "The brand's portal members and pending invites",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: { 200: { description: 'Team', schema: portalTeamSchema }, 401: signedOut, 404: notMember },
      handle: async ({ params: { brandId }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        return team.listTeam(brandId);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/invites',
      summary: 'Invite a teammate (owner); the link is e-mailed, or logged when no mail server is set',
      tags: ['portal'],
      security: session,
      before: asOwner,
      request: { params: portalBrandParamsSchema, body: portalInviteRequestSchema },
      responses: {
        201: {
          description: 'Invited (inviteUrl only when no mail server is configured, so the owner can pass it on)',
          schema: portalInviteSentSchema.extend({ inviteUrl: z.string().optional() }),
        },
        400: failure('Validation failed'),
        401: signedOut,
        403: csrfOrRole,
        404: notMember,
      },
      handle: async ({ params: { brandId }, body, req, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'owner');
        const invite = await team.inviteMember({
          brandId,
          email: body.email,
          role: body.role,
          invitedBy: actorOf(user),
          baseUrl: baseUrlOf(req, deps.publicUrl),
        });
        res.status(201);
        return {
          email: invite.email,
          role: invite.role,
          expiresAt: invite.expiresAt,
          ...(team.mailKind === 'log' ? { inviteUrl: invite.inviteUrl } : {}),
        };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/brands/:brandId/members/:userId',
      summary: "Change a member's role (owner); a brand keeps at least one owner",
      tags: ['portal'],
      security: session,
      before: asOwner,
      request: { params: portalMemberParamsSchema, body: portalMemberRoleRequestSchema },
      responses: {
        200: { description: 'Changed', schema: z.object({ userId: z.string(), role: z.string() }) },
        400: failure('Validation failed'),
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or no such member'),
        409: failure('The last owner cannot step down'),
      },
      handle: async ({ params: { brandId, userId }, body, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'owner');
        return team.changeRole({
          brandId,
          userId,
          role: body.role,
          changedBy: actorOf(user),
          actorUserId: user.id,
        });
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/brands/:brandId/members/:userId',
      summary: 'Remove a teammate (owner): their access to the brand ends at once; the last owner stays',
      description:
        'Their pending invites into the brand, and those they sent, are voided. Audited as `portal.member_remove`.',
      tags: ['portal'],
      security: session,
      before: asOwner,
      request: { params: portalMemberParamsSchema },
      responses: {
        200: { description: 'Removed', schema: portalTeamRemovalSchema },
        400: failure('Validation failed'),
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or no such member'),
        409: failure('The last owner cannot be removed'),
      },
      handle: async ({ params: { brandId, userId }, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'owner');
        const removed = await team.removeMember({ brandId, userId, actor: actorOf(user), actorUserId: user.id });
        return { success: true as const, ...removed };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/leave',
      summary: 'Leave the brand (any role); the last owner cannot leave',
      description: 'Your pending invites into the brand, and those you sent, are voided. Audited as `portal.leave`.',
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema },
      responses: {
        200: { description: 'Left', schema: portalTeamRemovalSchema },
        400: failure('Validation failed'),
        401: signedOut,
        403: failure('Missing CSRF token'),
        404: notMember,
        409: failure('You are the last owner: make someone else owner first'),
      },
      handle: async ({ params: { brandId }, res }) => {
        const user = portalUserOf(res);
        const left = await team.removeMember({ brandId, userId: user.id, actor: actorOf(user), actorUserId: user.id });
        return { success: true as const, ...left };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/members/:userId/sessions/end',
      summary: 'End every session of a teammate (owner): they sign in again',
      description: 'Audited as `portal.sessions_end`.',
      tags: ['portal'],
      security: session,
      before: asOwner,
      request: { params: portalMemberParamsSchema },
      responses: {
        200: { description: 'Ended', schema: portalSessionsEndedSchema },
        400: failure('Validation failed'),
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or no such member'),
      },
      handle: async ({ params: { brandId, userId }, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'owner');
        const ended = await team.endSessions({ brandId, userId, endedBy: actorOf(user) });
        return { success: true as const, ...ended };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/brands/:brandId/invites/:email',
      summary: 'Revoke the pending invites to an e-mail (owner): their links stop working',
      description: 'Audited as `portal.invite_revoke`.',
      tags: ['portal'],
      security: session,
      before: asOwner,
      request: { params: portalInviteParamsSchema },
      responses: {
        200: { description: 'Revoked', schema: portalInviteRevocationSchema },
        400: failure('Validation failed'),
        401: signedOut,
        403: csrfOrRole,
        404: failure('No such brand among yours, or no pending invite for this e-mail'),
      },
      handle: async ({ params: { brandId, email }, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'owner');
        const revoked = await team.revokeInvite({ brandId, email, revokedBy: actorOf(user) });
        return { success: true as const, ...revoked };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/audit',
      summary: "The brand's audit log, newest first: who changed what and when; filterable, paged",
      tags: ['portal'],
      security: session,
      before: signedIn,
      request: { params: portalBrandParamsSchema, query: auditQuerySchema },
      responses: {
        200: { description: 'Entries', schema: auditPageSchema },
        400: failure('Bad filter'),
        401: signedOut,
        404: notMember,
      },
      handle: async ({ params: { brandId }, query, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        return brands.audit(brandId, query);
      },
    }),
  ];
}

/** `POST /admin/portal/invites`: an operator invites a brand's first owner (`pts portal invite`). */
export function portalAdminRoutes(deps: {
  team: PortalTeamService;
  adminToken: string;
  publicUrl?: string | undefined;
}) {
  return [
    defineRoute({
      method: 'post',
      path: '/portal/invites',
      summary: 'Invite a person into a brand portal (the link is printed, and e-mailed when a mail server is set)',
      tags: ['admin', 'portal'],
      security: ['adminToken'],
      before: [requireAdminToken(deps.adminToken)],
      request: { body: portalAdminInviteRequestSchema, bodyReader: 'own' },
      responses: {
        201: { description: 'Invite', schema: portalInviteSchema },
        400: failure('Validation failed'),
        401: failure('Missing or wrong admin token'),
        404: failure('Unknown brand'),
      },
      handle: async ({ body, req, res }) => {
        const invite = await deps.team.inviteMember({
          ...body,
          invitedBy: 'admin',
          baseUrl: baseUrlOf(req, deps.publicUrl),
        });
        res.status(201);
        return invite;
      },
    }),
  ];
}
