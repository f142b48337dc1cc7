import { issueUserTokenRequestSchema, issueUserTokenResponseSchema } from '@pts/shared';
import { z } from 'zod';
import type { Database } from '../../db/database.ts';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { ensureUsers, findUserWallet, setUserWallets } from '../users/users.repository.ts';
import type { WalletProvider } from '../wallets/wallet-provider.ts';
import type { LocalTokenIssuer } from './local-token-issuer.ts';

export interface IdentityAdminRouterDeps {
  db: Database;
  wallets: WalletProvider;
  issuer: LocalTokenIssuer;
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
        const { userId, walletAddress } = await ensureUserWallet(deps, email);
        const issued = deps.issuer.issue({ subject: userId, email, walletAddress });
        return { success: true, token: issued.token, walletAddress, expiresAt: issued.expiresAt.toISOString() };
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

/** The user's id (DID) and wallet, creating either when absent; concurrent calls agree on the wallet. */
async function ensureUserWallet(
  deps: Pick<IdentityAdminRouterDeps, 'db' | 'wallets'>,
  email: string,
): Promise<{ userId: string; walletAddress: string }> {
  const user = (await ensureUsers(deps.db, [email])).get(email);
  if (!user) throw new Error(`user ${email} was not created`);
  if (!user.walletAddress) {
    const wallet = await deps.wallets.walletForUser({ userId: user.id, email });
    await setUserWallets(deps.db, [{ userId: user.id, address: wallet.address, idpUserId: wallet.idpUserId }]);
  }
  // Read back: a concurrent request may have set the wallet first.
  const row = await findUserWallet(deps.db, user.id);
  if (!row?.walletAddress) throw new Error(`user ${email} has no wallet after creating it`);
  return { userId: row.idpUserId || `did:pts:local:${user.id}`, walletAddress: row.walletAddress };
}
