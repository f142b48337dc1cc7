import {
  accountParamsSchema,
  accountResponseSchema,
  confirmLinkCodeRequestSchema,
  issueLinkCodeRequestSchema,
  issueLinkCodeResponseSchema,
  linkEmailRequestSchema,
  linkResultSchema,
  revokeLinkCodeRequestSchema,
  revokeLinkCodeResponseSchema,
  unlinkIdentityRequestSchema,
  unlinkResultSchema,
} from '@pts/shared';
import type { Request } from 'express';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { AccountService } from './accounts.service.ts';

export interface AccountRoutesDeps {
  accounts: AccountService;
  verifyBrandSignature: BrandSignatureVerifier;
  /** Confirmation attempts per brand and confirming identity (CONFIRM_ATTEMPTS_PER_10_MINUTES; compose.ts). */
  confirmLimit: RateLimit;
}

const BODY_LIMIT_BYTES = 4 * 1024;
/** Confirmation attempts per confirming identity and brand per code lifetime: guessing stays hopeless. */
export const CONFIRM_ATTEMPTS_PER_10_MINUTES = 10;

/** Every link route acts for a brand's bot or plugin: the brand signature is required and recorded as used. */
async function requireSigned(deps: AccountRoutesDeps, req: Request, brandId: string, what: string): Promise<void> {
  await requireBrandSignature(deps.verifyBrandSignature, req, brandId, what);
}

const signed: ['brandSignature'] = ['brandSignature'];
const badSignature = failure('Missing, wrong or replayed brand signature');

/**
 * Account linking, mounted under `/services` (docs/identity-linking.md): `POST /link/code`,
 * `POST /link/confirm`, `POST /link/revoke`, `POST /link/email`, `GET /link/:brandId/:userIdentifier`; all brand-signed.
 */
export function accountRoutes(deps: AccountRoutesDeps): Route[] {
  const { confirmLimit } = deps;
  return [
    defineRoute({
      method: 'post',
      path: '/link/code',
      summary: 'Issue a single-use link code (10 minutes) for an identity; confirm it from another platform',
      description:
        'The code is drawn from a CSPRNG and stored hashed; issuing again replaces the identity’s unused code.',
      tags: ['accounts'],
      security: signed,
      request: { body: issueLinkCodeRequestSchema, bodyLimitBytes: BODY_LIMIT_BYTES },
      responses: {
        200: { description: 'Code issued', schema: issueLinkCodeResponseSchema },
        400: failure('Invalid body'),
        401: badSignature,
      },
      handle: async ({ body, req, res }) => {
        await requireSigned(deps, req, body.brandId, 'Issuing a link code');
        res.setHeader('Cache-Control', 'no-store');
        return deps.accounts.issueLinkCode(body);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/link/confirm',
      summary: "Link the confirming identity to the code issuer's account (streak, balance, boards shared)",
      description:
        'Later rewards to the identity mint to the account wallet; tokens on its previous wallet stay there ' +
        '(`previousWalletBalance`). A code works once: of concurrent confirmations exactly one succeeds.',
      tags: ['accounts'],
      security: signed,
      request: { body: confirmLinkCodeRequestSchema, bodyLimitBytes: BODY_LIMIT_BYTES },
      responses: {
        200: { description: 'Linked (or already linked: `alreadyLinked`)', schema: linkResultSchema },
        400: failure('`INVALID_LINK_CODE` (details.reason unknown, expired, used), or a code confirmed by its issuer'),
        401: badSignature,
        409: failure('The identity is already linked to another account'),
        429: failure('More than 10 confirmation attempts for this identity in 10 minutes'),
      },
      handle: async ({ body, req, res }) => {
        await requireSigned(deps, req, body.brandId, 'Confirming a link code');
        await confirmLimit.consume(res, `${body.brandId}:${body.userIdentifier}`);
        return deps.accounts.confirmLinkCode(body);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/link/revoke',
      summary: 'Void a link code that was seen where others could read it (typed in a group chat)',
      description:
        'A bot calls it when a member types a code in a group: the code can never link. Idempotent; ' +
        '`revoked` is false when the code was unknown, used or revoked already.',
      tags: ['accounts'],
      security: signed,
      request: { body: revokeLinkCodeRequestSchema, bodyLimitBytes: BODY_LIMIT_BYTES },
      responses: {
        200: { description: 'The code cannot be used any more', schema: revokeLinkCodeResponseSchema },
        400: failure('Invalid body'),
        401: badSignature,
      },
      handle: async ({ body, req }) => {
        await requireSigned(deps, req, body.brandId, 'Revoking a link code');
        return deps.accounts.revokeLinkCode(body);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/link/email',
      summary: 'Link an identity to the account of an email the plugin proved the user owns',
      tags: ['accounts'],
      security: signed,
      request: { body: linkEmailRequestSchema, bodyLimitBytes: BODY_LIMIT_BYTES },
      responses: {
        200: { description: 'Linked (or already linked)', schema: linkResultSchema },
        400: failure('Invalid body, or the identity is the email itself'),
        401: badSignature,
        409: failure('The identity is already linked to another account'),
      },
      handle: async ({ body, req }) => {
        await requireSigned(deps, req, body.brandId, 'Linking an email');
        return deps.accounts.linkEmail(body);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/link/unlink',
      summary: 'Take an identity out of its account: it gets a wallet of its own again',
      description:
        'The account keeps its wallet, balance, streak and history. `identityKey` (default: the caller) must ' +
        'belong to the caller’s account; the primary identity (the account key, which holds the wallet) cannot leave.',
      tags: ['accounts'],
      security: signed,
      request: { body: unlinkIdentityRequestSchema, bodyLimitBytes: BODY_LIMIT_BYTES },
      responses: {
        200: { description: 'Unlinked', schema: unlinkResultSchema },
        400: failure('Invalid body'),
        401: badSignature,
        404: failure('`identityKey` is not in the caller’s account (details.reason `not_in_account`)'),
        409: failure('Nothing to unlink (`not_linked`) or the primary identity (`primary_identity`)'),
      },
      handle: async ({ body, req }) => {
        await requireSigned(deps, req, body.brandId, 'Unlinking an identity');
        return deps.accounts.unlinkIdentity(body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/link/:brandId/:userIdentifier',
      summary: "An identity's account, the account wallet and every linked identity",
      tags: ['accounts'],
      security: signed,
      request: { params: accountParamsSchema },
      responses: {
        200: { description: 'The account', schema: accountResponseSchema },
        400: failure('Invalid brandId or userIdentifier'),
        401: badSignature,
      },
      handle: async ({ params: { brandId, userIdentifier: identityKey }, req, res }) => {
        await requireSigned(deps, req, brandId, "A user's linked identities");
        res.setHeader('Cache-Control', 'no-store');
        return deps.accounts.describe(identityKey);
      },
    }),
  ];
}
