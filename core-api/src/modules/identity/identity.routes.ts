import { issueUserTokenRequestSchema, issueUserTokenResponseSchema } from '@pts/shared';
import { z } from 'zod';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { UserTokenService } from './identity.service.ts';
import type { LocalTokenIssuer } from './local-token-issuer.ts';

export interface IdentityAdminRouterDeps {
  /** Users' access tokens (identity.service.ts; compose.ts builds it). */
  userTokens: UserTokenService;
  adminToken: string;
}

const BODY_LIMIT = 16 * 1024;

/** The JWKS document: the issuer's public P-256 signing key (RFC 7517), never its private part. */
const jwksSchema = z.object({
  keys: z.array(
    z.object({
      kty: z.literal('EC'),
      crv: z.literal('P-256'),
      x: z.string(),
      y: z.string(),
      kid: z.string(),
      alg: z.literal('ES256'),
      use: z.literal('sig'),
    }),
  ),
});

/**
 * `POST /admin/users/token` (mounted at `/admin`): an access token for the user with this email, creating
 * the user and its wallet exactly as the event path does (users row; wallet derived from the user id) when
 * absent. Answer: `{ success, token, walletAddress, expiresAt }`.
 */
export function identityAdminRoutes(deps: IdentityAdminRouterDeps): Route[] {
  return [
    defineRoute({
      method: 'post',
      path: '/users/token',
      summary: 'An access token (ES256 JWT) for the user with this email, creating the user and wallet if absent',
      description:
        'The wallet is the one the event path gives the same user; the token verifies against `/.well-known/jwks.json`.',
      tags: ['identity'],
      security: ['adminToken'],
      before: [requireAdminToken(deps.adminToken)],
      request: { body: issueUserTokenRequestSchema, bodyReader: 'json-any-type', bodyLimitBytes: BODY_LIMIT },
      responses: {
        200: { description: "The token and the user's wallet", schema: issueUserTokenResponseSchema },
        400: failure('Invalid email'),
        401: failure('Missing or wrong admin token'),
      },
      handle: async ({ body: { email } }) => {
        const issued = await deps.userTokens.issue(email);
        return {
          success: true,
          token: issued.token,
          walletAddress: issued.walletAddress,
          expiresAt: issued.expiresAt.toISOString(),
        };
      },
    }),
  ];
}

/** `GET /.well-known/jwks.json`: the issuer's public signing key, for anyone verifying its tokens. */
export function jwksRoutes(deps: { issuer: LocalTokenIssuer }): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/.well-known/jwks.json',
      summary: "The local identity issuer's public signing key (JWKS), cached 5 minutes",
      tags: ['identity'],
      responses: { 200: { description: 'The key set', schema: jwksSchema } },
      handle: ({ res }) => {
        res.setHeader('Cache-Control', 'public, max-age=300');
        return deps.issuer.jwks();
      },
    }),
  ];
}
