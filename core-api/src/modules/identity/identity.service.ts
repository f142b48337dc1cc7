import type { Database } from '../../db/database.ts';
import { ensureUsers, findUserWallet, setUserWallets } from '../users/users.repository.ts';
import type { WalletProvider } from '../wallets/wallet-provider.ts';
import type { IssuedAccessToken, LocalTokenIssuer } from './local-token-issuer.ts';

/** Access tokens of the local identity provider for the admin API (`POST /admin/users/token`). */
export interface UserTokenService {
  /**
   * An access token for the user with this email, creating the user and its wallet exactly as the event path
   * does (users row; wallet derived from the user id) when absent.
   */
  issue(email: string): Promise<IssuedAccessToken & { walletAddress: string }>;
}

export function createUserTokenService(deps: {
  db: Database;
  wallets: WalletProvider;
  issuer: LocalTokenIssuer;
}): UserTokenService {
  return {
    async issue(email) {
      const { userId, walletAddress } = await ensureUserWallet(deps, email);
      return { ...deps.issuer.issue({ subject: userId, email, walletAddress }), walletAddress };
    },
  };
}

/** The user's id (DID) and wallet, creating either when absent; concurrent calls agree on the wallet. */
async function ensureUserWallet(
  deps: { db: Database; wallets: WalletProvider },
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
