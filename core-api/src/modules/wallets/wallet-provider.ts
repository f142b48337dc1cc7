import { createHmac } from 'node:crypto';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { bytesToHex, type Hex, keccak256 } from 'viem';
import { createAddressPool } from './address-pool.ts';
import { uncompressedPublicKey } from './public-key.mjs';

/** Port: gives a user a wallet. Local adapter derives from an HD seed; Privy comes with the relayer issue. */
export interface WalletProvider {
  readonly kind: string;
  /**
   * The wallet depends on the user's id alone (local HD wallets), so it can be made before the user row
   * exists (wallet-reserve.ts).
   */
  readonly derivesFromUserId?: boolean;
  /** Wallet for the user with this database id (the derivation index in the local adapter). */
  walletForUser(input: { userId: bigint; email: string }): Promise<{ address: `0x${string}`; idpUserId: string }>;
}

/**
 * Port: gives a social-login identity (spec 4.8) its own wallet, on a derivation branch apart from email
 * users so the two never collide. A separate interface so adapters without it still satisfy WalletProvider.
 */
export interface IdentityWalletProvider {
  /**
   * Wallet for the `oauth_identities` row with this id (the derivation index in the local adapter). A remote
   * adapter (Privy) links the wallet to the social account itself and needs `provider` and `subject`;
   * `username` is the account's display handle when known.
   */
  walletForIdentity(input: IdentityWalletInput): Promise<{ address: `0x${string}`; idpUserId: string }>;
}

/** Input of `walletForIdentity`: the row id, and the identity it stands for (optional for the local adapter). */
export interface IdentityWalletInput {
  identityId: bigint;
  /** Lowercase provider name, e.g. `discord` (an OAuthProvider). */
  provider?: string;
  /** The provider's user id (spec 2.7 `oauth_user_id`). */
  subject?: string;
  username?: string | undefined;
}

/** Path of user wallets under the local seed: m/44'/60'/0'/0/<user id>. */
const USER_WALLET_PARENT = "m/44'/60'/0'/0";

/** Path of social-login identity wallets under the same seed: m/44'/60'/1'/0/<identity id> (another account). */
const IDENTITY_WALLET_PARENT = "m/44'/60'/1'/0";

/** Order of the secp256k1 group. */
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * Local identity provider: deterministic wallets from a BIP-39 mnemonic kept in the data dir.
 *
 * A new user costs one BIP-32 child derivation and one public key. `HDKey.deriveChild` followed by viem's
 * `privateKeyToAccount` computed the child's public key twice in pure JavaScript (~2.5 ms of event-loop time
 * per new user on the bench machine, a third of the event path's CPU). The non-hardened child step is done
 * here with Node's native HMAC-SHA512 and secp256k1 (OpenSSL) instead: the same BIP-32 arithmetic,
 * `k_child = parse256(I_L) + k_par mod n` with `I = HMAC-SHA512(c_par, serP(K_par) || ser32(i))`, so keys
 * and addresses are identical to `deriveChild` + `privateKeyToAccount` (checked for 0–20,000 and random indexes
 * up to 2^31 - 1). The astronomically rare indexes BIP-32 says to skip (I_L ≥ n or a zero key) go through
 * @scure/bip32 itself, so even they match.
 */
export function createLocalWalletProvider(
  mnemonic: string,
  options: {
    /**
     * Worker threads computing addresses (public key + keccak) off the caller's event loop; 0 computes them
     * in this thread. See address-pool.ts.
     */
    addressThreads?: number;
    onWorkerError?(error: Error): void;
  } = {},
): WalletProvider &
  IdentityWalletProvider & {
    privateKeyForUser(userId: bigint): Hex;
    /** Stops the address workers. */
    close(): Promise<void>;
  } {
  const master = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic));
  const pool =
    options.addressThreads && options.addressThreads > 0
      ? createAddressPool({
          threads: options.addressThreads,
          fallback: addressOf,
          ...(options.onWorkerError ? { onWorkerError: options.onWorkerError } : {}),
        })
      : undefined;
  const address = (privateKey: Buffer) => (pool ? pool.addressOf(privateKey) : Promise.resolve(addressOf(privateKey)));
  const childPrivateKey = createChildDeriver(master.derive(USER_WALLET_PARENT));
  const identityChildPrivateKey = createChildDeriver(master.derive(IDENTITY_WALLET_PARENT));

  const checkedIndex = (userId: bigint): number => {
    if (userId < 0n || userId >= 2n ** 31n) throw new Error(`user id ${userId} is outside the derivation range`);
    return Number(userId);
  };

  const privateKeyForUser = (userId: bigint): Hex => bytesToHex(childPrivateKey(checkedIndex(userId)));

  return {
    kind: 'local',
    derivesFromUserId: true,
    privateKeyForUser,
    async walletForUser({ userId }) {
      return { address: await address(childPrivateKey(checkedIndex(userId))), idpUserId: `did:pts:local:${userId}` };
    },
    async walletForIdentity({ identityId }) {
      if (identityId < 0n || identityId >= 2n ** 31n) {
        throw new Error(`identity id ${identityId} is outside the derivation range`);
      }
      return {
        address: await address(identityChildPrivateKey(Number(identityId))),
        idpUserId: `did:pts:local:identity:${identityId}`,
      };
    },
    close: async () => {
      await pool?.close();
    },
  };
}

/** Ethereum address: last 20 bytes of keccak256 of the uncompressed public key without its 0x04 prefix. */
function addressOf(privateKey: Buffer): `0x${string}` {
  const hash = keccak256(uncompressedPublicKey(privateKey).subarray(1));
  return `0x${hash.slice(-40)}` as `0x${string}`;
}

/** Non-hardened child keys of `parent` with native HMAC-SHA512 (see createLocalWalletProvider). */
function createChildDeriver(parent: HDKey): (index: number) => Buffer {
  if (!parent.privateKey || !parent.publicKey || !parent.chainCode) throw new Error('wallet parent key is incomplete');
  const parentPublicKey = Buffer.from(parent.publicKey);
  const parentChainCode = Buffer.from(parent.chainCode);
  const parentPrivateKey = BigInt(bytesToHex(parent.privateKey));

  return (index: number): Buffer => {
    const data = Buffer.allocUnsafe(37);
    parentPublicKey.copy(data, 0);
    data.writeUInt32BE(index, 33);
    const digest = createHmac('sha512', parentChainCode).update(data).digest();
    const tweak = BigInt(`0x${digest.toString('hex', 0, 32)}`);
    const key = (tweak + parentPrivateKey) % CURVE_ORDER;
    if (tweak >= CURVE_ORDER || key === 0n) {
      // BIP-32's "proceed with the next index" case: let the reference implementation handle it.
      const child = parent.deriveChild(index);
      if (!child.privateKey) throw new Error('derived key has no private key');
      return Buffer.from(child.privateKey);
    }
    return Buffer.from(key.toString(16).padStart(64, '0'), 'hex');
  };
}
