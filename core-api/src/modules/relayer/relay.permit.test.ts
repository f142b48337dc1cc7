import { isAppError } from '@pts/shared';
import { type Address, getAddress, type Hex, parseSignature } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { PERMIT_TYPES, type PermitCheck, type PermitDomain, verifyPermit } from './permit.ts';

const owner = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
const sale = getAddress('0x3000000000000000000000000000000000000003');
const domain: PermitDomain = {
  name: 'PTS Reward Token',
  version: '1',
  chainId: 1868,
  verifyingContract: getAddress('0x1000000000000000000000000000000000000001'),
};
const now = 1_800_000_000;

async function signed(
  input: { signer?: typeof owner; value?: bigint; nonce?: bigint; deadline?: bigint; domain?: PermitDomain } = {},
) {
  const value = input.value ?? 50n;
  const deadline = input.deadline ?? BigInt(now + 600);
  const signature = await (input.signer ?? owner).signTypedData({
    domain: input.domain ?? domain,
    types: PERMIT_TYPES,
    primaryType: 'Permit',
    message: { owner: owner.address, spender: sale, value, nonce: input.nonce ?? 0n, deadline },
  });
  const { r, s, v, yParity } = parseSignature(signature);
  return { owner: owner.address, spender: sale, value, deadline, v: Number(v ?? BigInt(yParity + 27)), r, s };
}

function check(permit: PermitCheck['permit'], overrides: Partial<PermitCheck> = {}): PermitCheck {
  return {
    permit,
    userAddress: owner.address,
    allowedSpenders: [sale],
    nonce: 0n,
    domain,
    nowSeconds: now,
    ...overrides,
  };
}

async function reason(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error) && error.code === 'VALIDATION_FAILED') return String(error.details?.reason);
    throw error;
  }
  return 'accepted';
}

describe('verifyPermit', () => {
  it("accepts the owner's signature over the current nonce, with v as 27/28 or 0/1", async () => {
    const permit = await signed();
    expect(await reason(verifyPermit(check(permit, { minimumValue: 50n })))).toBe('accepted');
    expect(await reason(verifyPermit(check({ ...permit, v: permit.v - 27 })))).toBe('accepted');
  });

  it('refuses what is wrong, saying what', async () => {
    const permit = await signed();
    expect(await reason(verifyPermit(check(permit, { userAddress: stranger.address })))).toBe('owner_mismatch');
    expect(await reason(verifyPermit(check(permit, { allowedSpenders: [stranger.address as Address] })))).toBe(
      'spender_not_allowed',
    );
    expect(await reason(verifyPermit(check(permit, { minimumValue: 51n })))).toBe('value_too_low');
    expect(await reason(verifyPermit(check(permit, { nowSeconds: now + 600 })))).toBe('expired');
    // A used nonce (the token moved on), another chain, another key, a tampered value.
    expect(await reason(verifyPermit(check(permit, { nonce: 1n })))).toBe('bad_signature');
    expect(await reason(verifyPermit(check(permit, { domain: { ...domain, chainId: 1 } })))).toBe('bad_signature');
    expect(await reason(verifyPermit(check(await signed({ signer: stranger }))))).toBe('bad_signature');
    expect(await reason(verifyPermit(check({ ...permit, value: 49n })))).toBe('bad_signature');
    expect(await reason(verifyPermit(check({ ...permit, v: 30 })))).toBe('bad_signature');
    expect(await reason(verifyPermit(check({ ...permit, r: `0x${'00'.repeat(32)}` as Hex })))).toBe('bad_signature');
  });
});
