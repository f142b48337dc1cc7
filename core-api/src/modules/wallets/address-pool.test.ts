import { createECDH, randomBytes } from 'node:crypto';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { createAddressPool } from './address-pool.ts';
import { publicKeyImplementation, uncompressedPublicKey } from './public-key.mjs';
import { createLocalWalletProvider } from './wallet-provider.ts';

const MNEMONIC = 'test test test test test test test test test test test junk';
const checksumless = (key: Buffer) =>
  privateKeyToAccount(`0x${key.toString('hex')}`).address.toLowerCase() as `0x${string}`;

describe('public keys', () => {
  it('come from libsecp256k1 where its prebuilt binding exists, identical to OpenSSL’s', () => {
    if (process.platform === 'linux' && process.arch === 'x64') expect(publicKeyImplementation).toBe('libsecp256k1');
    const ecdh = createECDH('secp256k1');
    for (let i = 0; i < 200; i++) {
      const key = randomBytes(32);
      ecdh.setPrivateKey(key);
      expect(uncompressedPublicKey(key).toString('hex')).toBe(ecdh.getPublicKey('hex'));
    }
  });
});

describe('address pool', () => {
  it('computes the same addresses as viem, many keys in one tick and across ticks', async () => {
    let fallbacks = 0;
    const pool = createAddressPool({
      threads: 2,
      fallback: (key) => {
        fallbacks += 1;
        return checksumless(key);
      },
    });
    try {
      const keys = Array.from({ length: 300 }, () => randomBytes(32));
      const first = await Promise.all(keys.slice(0, 200).map((key) => pool.addressOf(key)));
      const second = await Promise.all(keys.slice(200).map((key) => pool.addressOf(key)));
      expect([...first, ...second]).toEqual(keys.map(checksumless));
      expect(fallbacks).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('the local provider gives identical wallets with and without workers', async () => {
    const inline = createLocalWalletProvider(MNEMONIC, { addressThreads: 0 });
    const pooled = createLocalWalletProvider(MNEMONIC, { addressThreads: 1 });
    try {
      const ids = [0n, 1n, 2n, 41n, 1000n, 2n ** 31n - 1n];
      const a = await Promise.all(ids.map((userId) => inline.walletForUser({ userId, email: '' })));
      const b = await Promise.all(ids.map((userId) => pooled.walletForUser({ userId, email: '' })));
      expect(b).toEqual(a);
      // Hardhat's first account is m/44'/60'/0'/0/0 of this mnemonic.
      expect(a[0]?.address).toBe('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266');
      const identity = await pooled.walletForIdentity({ identityId: 7n });
      expect(identity).toEqual(await inline.walletForIdentity({ identityId: 7n }));
    } finally {
      await inline.close();
      await pooled.close();
    }
  });

  it('answers in this thread when a worker dies: no address is lost', async () => {
    const errors: Error[] = [];
    let fallbacks = 0;
    const pool = createAddressPool({
      threads: 1,
      fallback: (key) => {
        fallbacks += 1;
        return checksumless(key);
      },
      onWorkerError: (error) => errors.push(error),
    });
    try {
      const key = randomBytes(32);
      expect(await pool.addressOf(key)).toBe(checksumless(key));
      // Kill the worker from outside, the way an out-of-memory or a crash would.
      await Promise.all(pool.workersForTests.map((worker) => worker.terminate()));
      const keys = Array.from({ length: 5 }, () => randomBytes(32));
      expect(await Promise.all(keys.map((k) => pool.addressOf(k)))).toEqual(keys.map(checksumless));
      expect(fallbacks).toBe(5);
      expect(errors).toHaveLength(1);
    } finally {
      await pool.close();
    }
  });
});
