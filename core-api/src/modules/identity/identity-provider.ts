import { AppError } from '@pts/shared';
import { type Address, getAddress, isAddress } from 'viem';
import type { LocalTokenIssuer } from './local-token-issuer.ts';

/** The person behind a verified access token. */
export interface AuthenticatedUser {
  /** The identity provider's user id (a DID: `did:pts:local:42`, `did:privy:…`). */
  userId: string;
  email?: string;
  /** Every wallet this user controls (checksummed); a relayed call's `userAddress` must be one of them. */
  walletAddresses: Address[];
}

/**
 * Port: verifies the identity provider's access tokens (relay, spec 5). Adapters: `local` (our own ES256
 * issuer) and `privy`. Anything wrong with a token throws AppError UNAUTHORIZED (401) saying what.
 */
export interface IdentityProvider {
  readonly kind: 'local' | 'privy';
  verifyAccessToken(token: string): Promise<AuthenticatedUser>;
  /** Whether the provider answers (diagnostic `identity_provider`); never throws. */
  ping(): Promise<boolean>;
}

/** The local adapter: tokens issued by this platform's own issuer carry the user's wallet as a claim. */
export function createLocalIdentityProvider(issuer: LocalTokenIssuer): IdentityProvider {
  return {
    kind: 'local',
    async verifyAccessToken(token) {
      const claims = issuer.verifyAccessToken(token);
      if (typeof claims.wallet_address !== 'string' || !isAddress(claims.wallet_address, { strict: false })) {
        throw new AppError('UNAUTHORIZED', 'The access token has no valid wallet_address claim');
      }
      return {
        userId: claims.sub,
        email: claims.email,
        walletAddresses: [getAddress(claims.wallet_address)],
      };
    },
    async ping() {
      return true;
    },
  };
}
