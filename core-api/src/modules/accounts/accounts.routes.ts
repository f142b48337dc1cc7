import {
  accountParamsSchema,
  accountResponseSchema,
  confirmLinkCodeRequestSchema,
  errorEnvelopeSchema,
  issueLinkCodeRequestSchema,
  issueLinkCodeResponseSchema,
  linkEmailRequestSchema,
  linkResultSchema,
  unlinkIdentityRequestSchema,
  unlinkResultSchema,
} from '@pts/shared';
import { type Request, Router } from 'express';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { jsonBody, requireJson } from '../../http/json-body.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { parseInput } from '../../http/validate.ts';
import type { ApiDocs } from '../../observability/openapi.ts';
import {
  type AccountDeps,
  confirmLinkCode,
  describeAccount,
  issueLinkCode,
  linkEmail,
  unlinkIdentity,
} from './accounts.service.ts';

export interface AccountRoutesDeps extends AccountDeps {
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

/**
 * Account linking, mounted under `/services` (docs/identity-linking.md): `POST /link/code`,
 * `POST /link/confirm`, `POST /link/email`, `GET /link/:brandId/:userIdentifier`; all brand-signed.
 */
export function createAccountsRouter(deps: AccountRoutesDeps): Router {
  const router = Router();
  const { confirmLimit } = deps;

  router.post('/link/code', requireJson, jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    const input = parseInput(issueLinkCodeRequestSchema, req.body);
    await requireSigned(deps, req, input.brandId, 'Issuing a link code');
    res.setHeader('Cache-Control', 'no-store');
    res.json(await issueLinkCode(deps, input));
  });

  router.post('/link/confirm', requireJson, jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    const input = parseInput(confirmLinkCodeRequestSchema, req.body);
    await requireSigned(deps, req, input.brandId, 'Confirming a link code');
    await confirmLimit.consume(res, `${input.brandId}:${input.userIdentifier}`);
    res.json(await confirmLinkCode(deps, input));
  });

  router.post('/link/email', requireJson, jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    const input = parseInput(linkEmailRequestSchema, req.body);
    await requireSigned(deps, req, input.brandId, 'Linking an email');
    res.json(await linkEmail(deps, input));
  });

  router.post('/link/unlink', requireJson, jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    const input = parseInput(unlinkIdentityRequestSchema, req.body);
    await requireSigned(deps, req, input.brandId, 'Unlinking an identity');
    res.json(await unlinkIdentity(deps, input));
  });

  router.get('/link/:brandId/:userIdentifier', async (req, res) => {
    const { brandId, userIdentifier } = parseInput(accountParamsSchema, req.params, 'path');
    await requireSigned(deps, req, brandId, "A user's linked identities");
    res.setHeader('Cache-Control', 'no-store');
    res.json(await describeAccount(deps.db, userIdentifier));
  });

  return router;
}

/** Documents the account-linking services in the OpenAPI document. */
export function registerAccountDocs(docs: ApiDocs, prefix = '/services'): void {
  const failure = (description: string) => ({ description, schema: errorEnvelopeSchema });
  const signed = ['brandSignature' as const];
  docs.register({
    method: 'post',
    path: `${prefix}/link/code`,
    summary: 'Issue a single-use link code (10 minutes) for an identity; confirm it from another platform',
    description:
      'The code is drawn from a CSPRNG and stored hashed; issuing again replaces the identity’s unused code.',
    tags: ['accounts'],
    security: signed,
    request: { body: issueLinkCodeRequestSchema },
    responses: {
      200: { description: 'Code issued', schema: issueLinkCodeResponseSchema },
      400: failure('Invalid body'),
      401: failure('Missing, wrong or replayed brand signature'),
    },
  });
  docs.register({
    method: 'post',
    path: `${prefix}/link/confirm`,
    summary: "Link the confirming identity to the code issuer's account (streak, balance, boards shared)",
    description:
      'Later rewards to the identity mint to the account wallet; tokens on its previous wallet stay there ' +
      '(`previousWalletBalance`). A code works once: of concurrent confirmations exactly one succeeds.',
    tags: ['accounts'],
    security: signed,
    request: { body: confirmLinkCodeRequestSchema },
    responses: {
      200: { description: 'Linked (or already linked: `alreadyLinked`)', schema: linkResultSchema },
      400: failure('`INVALID_LINK_CODE` (details.reason unknown, expired, used), or a code confirmed by its issuer'),
      401: failure('Missing, wrong or replayed brand signature'),
      409: failure('The identity is already linked to another account'),
      429: failure('More than 10 confirmation attempts for this identity in 10 minutes'),
    },
  });
  docs.register({
    method: 'post',
    path: `${prefix}/link/email`,
    summary: 'Link an identity to the account of an email the plugin proved the user owns',
    tags: ['accounts'],
    security: signed,
    request: { body: linkEmailRequestSchema },
    responses: {
      200: { description: 'Linked (or already linked)', schema: linkResultSchema },
      400: failure('Invalid body, or the identity is the email itself'),
      401: failure('Missing, wrong or replayed brand signature'),
      409: failure('The identity is already linked to another account'),
    },
  });
  docs.register({
    method: 'post',
    path: `${prefix}/link/unlink`,
    summary: 'Take an identity out of its account: it gets a wallet of its own again',
    description:
      'The account keeps its wallet, balance, streak and history. `identityKey` (default: the caller) must ' +
      'belong to the caller’s account; the primary identity (the account key, which holds the wallet) cannot leave.',
    tags: ['accounts'],
    security: signed,
    request: { body: unlinkIdentityRequestSchema },
    responses: {
      200: { description: 'Unlinked', schema: unlinkResultSchema },
      400: failure('Invalid body'),
      401: failure('Missing, wrong or replayed brand signature'),
      404: failure('`identityKey` is not in the caller’s account (details.reason `not_in_account`)'),
      409: failure('Nothing to unlink (`not_linked`) or the primary identity (`primary_identity`)'),
    },
  });
  docs.register({
    method: 'get',
    path: `${prefix}/link/:brandId/:userIdentifier`,
    summary: "An identity's account, the account wallet and every linked identity",
    tags: ['accounts'],
    security: signed,
    request: { params: accountParamsSchema },
    responses: {
      200: { description: 'The account', schema: accountResponseSchema },
      400: failure('Invalid brandId or userIdentifier'),
      401: failure('Missing, wrong or replayed brand signature'),
    },
  });
}
