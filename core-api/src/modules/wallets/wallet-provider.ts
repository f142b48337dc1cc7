import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { type Hex, bytesToHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/** Port: gives a user a wallet. Local adapter derives from an HD seed; Privy comes with the relayer issue. */
export interface WalletProvider {
  readonly kind: string;
  /** Wallet for the user with this database id (the derivation index in the local adapter). */
  walletForUser(input: { userId: bigint; email: string }): Promise<{ address: `0x${string}`; idpUserId: string }>;
}

/** Path of user wallets under the local seed: m/44'/60'/0'/0/<user id>. */
const USER_WALLET_PARENT = "m/44'/60'/0'/0";

/** Local identity provider: deterministic wallets from a BIP-39 mnemonic kept in the data dir. */
export function createLocalWalletProvider(mnemonic: string): WalletProvider & {
  privateKeyForUser(userId: bigint): Hex;
} {
  const parent = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive(USER_WALLET_PARENT);
  const privateKeyForUser = (userId: bigint): Hex => {
    if (userId < 0n || userId >= 2n ** 31n) throw new Error(`user id ${userId} is outside the derivation range`);
    const child = parent.deriveChild(Number(userId));
    if (!child.privateKey) throw new Error('derived key has no private key');
    return bytesToHex(child.privateKey);
  };
  return {
    kind: 'local',
    privateKeyForUser,
    async walletForUser({ userId }) {
      const account = privateKeyToAccount(privateKeyForUser(userId));
      return { address: account.address.toLowerCase() as `0x${string}`, idpUserId: `did:pts:local:${userId}` };
    },
  };
}
