import { issueUserTokenRequestSchema } from '@pts/shared';
import { Router } from 'express';
import type { Database } from '../../db/database.ts';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { jsonBody } from '../../http/json-body.ts';
import { parseInput } from '../../http/validate.ts';
import { ensureUsers, setUserWallets } from '../users/users.repository.ts';
import type { WalletProvider } from '../wallets/wallet-provider.ts';
import type { LocalTokenIssuer } from './local-token-issuer.ts';

export interface IdentityAdminRouterDeps {
  db: Database;
  wallets: WalletProvider;
  issuer: LocalTokenIssuer;
  adminToken: string;
}

const BODY_LIMIT = 16 * 1024;

/**
 * `POST /admin/users/token` (mounted at `/admin`): an access token for the user with this email, creating
 * the user and its wallet exactly as the event path does (users row; wallet derived from the user id) when
 * absent. Answer: `{ success, token, walletAddress, expiresAt }`.
 */
export function createIdentityAdminRouter(deps: IdentityAdminRouterDeps): Router {
  const router = Router();
  router.post('/users/token', requireAdminToken(deps.adminToken), jsonBody(BODY_LIMIT), async (req, res) => {
    const { email } = parseInput(issueUserTokenRequestSchema, req.body ?? {});
    const { userId, walletAddress } = await ensureUserWallet(deps, email);
    const issued = deps.issuer.issue({ subject: userId, email, walletAddress });
    res.json({ success: true, token: issued.token, walletAddress, expiresAt: issued.expiresAt.toISOString() });
  });
  return router;
}

/** `GET /.well-known/jwks.json`: the issuer's public signing key, for anyone verifying its tokens. */
export function createJwksRouter(deps: { issuer: LocalTokenIssuer }): Router {
  const router = Router();
  router.get('/.well-known/jwks.json', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(deps.issuer.jwks());
  });
  return router;
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
  const row = await deps.db
    .selectFrom('users')
    .select(['wallet_address', 'idp_user_id'])
    .where('id', '=', user.id)
    .executeTakeFirstOrThrow();
  if (!row.wallet_address) throw new Error(`user ${email} has no wallet after creating it`);
  return { userId: row.idp_user_id || `did:pts:local:${user.id}`, walletAddress: row.wallet_address };
}
