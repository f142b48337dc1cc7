import { randomUUID } from 'node:crypto';
import {
  AppError,
  eventExportQuerySchema,
  type MemberListEntry,
  manualAwardRequestSchema,
  manualAwardResponseSchema,
  memberBlockRequestSchema,
  memberBlockResponseSchema,
  memberDeductionRequestSchema,
  memberDeductionResponseSchema,
  memberExportQuerySchema,
  memberListQuerySchema,
  memberListResponseSchema,
  memberParamsSchema,
  memberProfileSchema,
  memberSearchQuerySchema,
  memberSearchResponseSchema,
  portalBrandParamsSchema,
} from '@pts/shared';
import { type CsvCell, sendCsv } from '../../http/csv.ts';
import { idempotencyKeyOf } from '../../http/idempotency-key.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { BrandMemberService } from '../members/brand-members.service.ts';
import type { ReversalService } from '../reversals/reversals.service.ts';
import { actorOf } from './portal.routes.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import { portalUserOf, requireBrandRole, requireSession } from './portal-session.ts';
import type { PortalTeamService } from './portal-team.service.ts';

export interface PortalMemberRoutesDeps {
  auth: PortalAuthService;
  team: PortalTeamService;
  members: BrandMemberService;
  reversals: Pick<ReversalService, 'deduct'>;
}

const session: ['portalSession'] = ['portalSession'];
const signedOut = failure('Not signed in (no session, or it ended)');
const notFound = failure('No such brand among yours, or the brand has never seen this member');
const exportRole = failure('Exports hold personal data: admins and owners only');

const MEMBER_CSV_HEADER = [
  'account',
  'identities',
  'wallet',
  'balance',
  'earned',
  'spent',
  'joined_at',
  'last_activity_at',
];
const memberCsvRow = (member: MemberListEntry): CsvCell[] => [
  member.accountKey,
  member.identityKeys.join(' '),
  member.walletAddress,
  member.balance,
  member.earned,
  member.spent,
  member.joinedAt,
  member.lastActivityAt,
];
const EVENT_CSV_HEADER = ['event_id', 'created_at', 'event_type', 'member', 'status', 'reason', 'reward', 'sent_by'];

/** A file name's date part: `2026-12-07`. */
const dayOf = (at: Date) => at.toISOString().slice(0, 10);

/**
 * The portal's Members page (docs/portal.md): search the brand's loyalty members, read one member's page,
 * and give a manual award (admin or owner) through the event pipeline, audited with the portal user as the
 * actor. A member the brand has never seen answers 404, whichever other brand knows them.
 */
export function portalMemberRoutes(deps: PortalMemberRoutesDeps): Route[] {
  const { team, members } = deps;
  const signedIn = [requireSession(deps.auth)];
  // The role is checked before the query or body is read: a viewer's malformed change is 403, another brand's
  // team member's malformed request 404, never a 400 that read it first (issue 33 §14).
  const asViewer = [...signedIn, requireBrandRole(team, 'viewer')];
  const asAdmin = [...signedIn, requireBrandRole(team, 'admin')];
  return [
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/member-list',
      summary: "The brand's members, sorted by balance, earned, last activity or join date, a page at a time",
      description:
        'A member is an account with its identities. `balance` is earned − spent at the brand (the member ledger). ' +
        'Keyset pages: pass `nextCursor` back as `cursor` with the same sort, order and search. `q` is found ' +
        'anywhere in an e-mail, an identity or a wallet.',
      tags: ['portal'],
      security: session,
      before: asViewer,
      request: { params: portalBrandParamsSchema, query: memberListQuerySchema },
      responses: {
        200: { description: 'One page', schema: memberListResponseSchema },
        400: failure('Bad sort, order, limit, search or cursor'),
        401: signedOut,
        404: notFound,
      },
      handle: async ({ params: { brandId }, query, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        res.setHeader('Cache-Control', 'no-store');
        return { success: true, ...(await members.list(brandId, query)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/member-list.csv',
      summary: 'The member list as CSV, with the same sort and search (admin or owner), streamed',
      description:
        "Every member, written as read (1,000 per statement); text cells that could start a formula get a leading `'`.",
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalBrandParamsSchema, query: memberExportQuerySchema },
      responses: {
        200: { description: 'CSV (text/csv)' },
        400: failure('Bad sort, order or search'),
        401: signedOut,
        403: exportRole,
        404: notFound,
      },
      handle: async ({ params: { brandId }, query, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'admin');
        const rows = (async function* () {
          for await (const batch of members.readAll(brandId, query)) yield batch.map(memberCsvRow);
        })();
        await sendCsv(res, `members-${brandId.slice(0, 10)}-${query.sort}-${query.order}.csv`, MEMBER_CSV_HEADER, rows);
        return undefined;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/events.csv',
      summary: "A period's events as CSV, accepted and refused, oldest first (admin or owner), streamed",
      description: '`from` (inclusive) and `to` (exclusive) are ISO 8601 date-times.',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: portalBrandParamsSchema, query: eventExportQuerySchema },
      responses: {
        200: { description: 'CSV (text/csv)' },
        400: failure('from or to missing or not a date-time, or from not before to'),
        401: signedOut,
        403: exportRole,
        404: notFound,
      },
      handle: async ({ params: { brandId }, query, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'admin');
        const window = { from: new Date(query.from), to: new Date(query.to) };
        if (window.from >= window.to) {
          throw new AppError('VALIDATION_ERROR', 'from must be before to', { field: 'from' });
        }
        const rows = (async function* () {
          for await (const batch of members.readEvents(brandId, window)) {
            yield batch.map((event): CsvCell[] => [
              event.eventId,
              event.createdAt,
              event.eventType,
              event.userKey,
              event.status,
              event.reason,
              BigInt(event.rewardAmount),
              event.sentBy,
            ]);
          }
        })();
        const filename = `events-${brandId.slice(0, 10)}-${dayOf(window.from)}-to-${dayOf(window.to)}.csv`;
        await sendCsv(res, filename, EVENT_CSV_HEADER, rows);
        return undefined;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/loyalty-members',
      summary: "Search the brand's members by e-mail, platform identity (discord:123) or wallet",
      description:
        'At most 20 matches, most recently seen first. Members are the people with an event or a redemption at the brand.',
      tags: ['portal'],
      security: session,
      before: asViewer,
      request: { params: portalBrandParamsSchema, query: memberSearchQuerySchema },
      responses: {
        200: { description: 'Matches', schema: memberSearchResponseSchema },
        400: failure('Search text missing or too short'),
        401: signedOut,
        404: notFound,
      },
      handle: async ({ params: { brandId }, query: { q }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        return { success: true, members: await members.search(brandId, q) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/brands/:brandId/loyalty-members/:userKey',
      summary: "A member's page: balance, events (refused ones with their reason), redemptions, streak, achievements",
      tags: ['portal'],
      security: session,
      before: asViewer,
      request: { params: memberParamsSchema },
      responses: { 200: { description: 'Member', schema: memberProfileSchema }, 401: signedOut, 404: notFound },
      handle: async ({ params: { brandId, userKey: identityKey }, res }) => {
        await team.requireRole(portalUserOf(res).id, brandId, 'viewer');
        res.setHeader('Cache-Control', 'no-store');
        return members.profile(brandId, identityKey);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/loyalty-members/:userKey/awards',
      summary: 'Give a member pts by hand with the reason why (admin or owner); audited',
      description:
        'Recorded as a `manual_award` event (the reason in its metadata) and minted like every reward; the audit log names the portal user. ' +
        '`idempotencyKey` (or the `Idempotency-Key` header), one per intended award: a repeat answers the first award (`replayed: true`) and pays nothing.',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: memberParamsSchema, body: manualAwardRequestSchema },
      responses: {
        200: { description: 'Awarded', schema: manualAwardResponseSchema },
        400: failure('Validation failed (the reason is required)'),
        401: signedOut,
        403: failure('Missing CSRF token, the role cannot make this change, or the member is blocked (MEMBER_BLOCKED)'),
        404: notFound,
        409: failure('The idempotency key was used for another award (another member, amount or person)'),
      },
      handle: async ({ params: { brandId, userKey: identityKey }, body, req, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        const idempotencyKey = idempotencyKeyOf(req, body.idempotencyKey);
        return members.awardKey({ brandId, userKey: identityKey, ...body, idempotencyKey, actor: actorOf(user) });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/loyalty-members/:userKey/deductions',
      summary: 'Take pts back from a member by hand with the reason why (admin or owner); audited',
      description:
        'Recorded as a reversal of kind `deduction` (no event) on the one ledger, burned on chain by the same `reverseBatch` as a refund, ' +
        'and audited as `member.deduct` naming the portal user. At most what the member holds spendable (in the wallet, and of what this brand gave them): ' +
        'a deduction is not a refund (docs/portal.md, "Members"). `idempotencyKey` (or the `Idempotency-Key` header), one per intended deduction: ' +
        'a repeat answers the first deduction (`replayed: true`) and takes nothing more.',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: memberParamsSchema, body: memberDeductionRequestSchema },
      responses: {
        200: {
          description: 'Deducted (its chain side `pending`, `submitted` or `confirmed`)',
          schema: memberDeductionResponseSchema,
        },
        400: failure(
          'Validation failed: the reason is required, or the amount is above what the member holds spendable',
        ),
        401: signedOut,
        403: failure('Missing CSRF token, or the role cannot make this change (viewers)'),
        404: notFound,
        409: failure('The idempotency key was used for another deduction (another member, amount or person)'),
      },
      handle: async ({ params: { brandId, userKey }, body, req, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        const idempotencyKey = idempotencyKeyOf(req, body.idempotencyKey) ?? randomUUID();
        return deps.reversals.deduct({
          brandId,
          userKey,
          amount: body.amount,
          reason: body.reason,
          idempotencyKey,
          actor: actorOf(user),
        });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/brands/:brandId/loyalty-members/:userKey/block',
      summary: 'Block a member with the reason why (admin or owner): their events are refused; audited',
      description:
        'Every identity of the member’s account is blocked; their events are refused with `MEMBER_BLOCKED` (the member page shows it) until unblocked. Audited as `member.block`.',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: memberParamsSchema, body: memberBlockRequestSchema },
      responses: {
        200: { description: 'Blocked', schema: memberBlockResponseSchema },
        400: failure('Validation failed (the reason is required)'),
        401: signedOut,
        403: failure('Missing CSRF token, or the role cannot make this change'),
        404: notFound,
        409: failure('Already blocked'),
      },
      handle: async ({ params: { brandId, userKey }, body, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        return members.setBlock({ brandId, userKey, reason: body.reason, actor: actorOf(user) });
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/brands/:brandId/loyalty-members/:userKey/block',
      summary: 'Unblock a member (admin or owner): their events earn again; audited',
      description: 'Audited as `member.unblock`.',
      tags: ['portal'],
      security: session,
      before: asAdmin,
      request: { params: memberParamsSchema },
      responses: {
        200: { description: 'Unblocked', schema: memberBlockResponseSchema },
        400: failure('Validation failed'),
        401: signedOut,
        403: failure('Missing CSRF token, or the role cannot make this change'),
        404: notFound,
        409: failure('Not blocked'),
      },
      handle: async ({ params: { brandId, userKey }, res }) => {
        const user = portalUserOf(res);
        await team.requireRole(user.id, brandId, 'admin');
        return members.setBlock({ brandId, userKey, reason: null, actor: actorOf(user) });
      },
    }),
  ];
}
