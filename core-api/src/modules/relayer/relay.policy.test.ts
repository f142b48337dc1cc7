import { isAppError } from '@pts/shared';
import { type Address, encodeFunctionData, getAddress, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { businessEscrowAbi, perkNFTAbi, pointsSaleAbi, rewardTokenAbi } from '../../chain/artifacts/index.ts';
import { allowedFunctionsOf, decodeRelayCall, type RelayContracts } from './relay-policy.ts';

const contracts: RelayContracts = {
  rewardToken: '0x1000000000000000000000000000000000000001',
  perkNft: '0x2000000000000000000000000000000000000002',
  pointsSale: '0x3000000000000000000000000000000000000003',
  businessEscrow: '0x4000000000000000000000000000000000000004',
};
const user = getAddress('0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
const other = getAddress('0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb');
const r = `0x${'11'.repeat(32)}` as Hex;
const s = `0x${'22'.repeat(32)}` as Hex;

function refusal(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    if (isAppError(error)) return { code: error.code, status: error.status, details: error.details ?? {} };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('decodeRelayCall', () => {
  it('accepts claimPerk and claimPerkWithPermit for the caller', () => {
    const claim = decodeRelayCall(contracts, {
      to: contracts.pointsSale!,
      data: encodeFunctionData({ abi: pointsSaleAbi, functionName: 'claimPerk', args: [user, 7n] }),
      userAddress: user,
    });
    expect(claim).toMatchObject({ kind: 'claimPerk', user, collectionId: 7n });
    const withPermit = decodeRelayCall(contracts, {
      to: contracts.pointsSale!.toUpperCase().replace('0X', '0x') as Address,
      data: encodeFunctionData({
        abi: pointsSaleAbi,
        functionName: 'claimPerkWithPermit',
        args: [user, 7n, 99n, 27, r, s],
      }),
      userAddress: user,
    });
    expect(withPermit).toMatchObject({
      kind: 'claimPerkWithPermit',
      collectionId: 7n,
      permit: { deadline: 99n, v: 27 },
    });
  });

  it("refuses a claim for someone else's wallet (their allowance)", () => {
    const result = refusal(() =>
      decodeRelayCall(contracts, {
        to: contracts.pointsSale!,
        data: encodeFunctionData({ abi: pointsSaleAbi, functionName: 'claimPerk', args: [other, 1n] }),
        userAddress: user,
      }),
    );
    expect(result).toMatchObject({ code: 'VALIDATION_FAILED', status: 403, details: { field: 'user', value: other } });
  });

  it('accepts permit(owner = caller, spender = PointsSale) only', () => {
    const permit = (owner: Address, spender: Address) =>
      encodeFunctionData({ abi: rewardTokenAbi, functionName: 'permit', args: [owner, spender, 10n, 5n, 28, r, s] });
    expect(
      decodeRelayCall(contracts, {
        to: contracts.rewardToken,
        data: permit(user, contracts.pointsSale!),
        userAddress: user,
      }),
    ).toMatchObject({ kind: 'permit', permit: { owner: user, value: 10n } });
    expect(
      refusal(() =>
        decodeRelayCall(contracts, {
          to: contracts.rewardToken,
          data: permit(other, contracts.pointsSale!),
          userAddress: user,
        }),
      ).details,
    ).toMatchObject({ field: 'owner' });
    expect(
      refusal(() =>
        decodeRelayCall(contracts, { to: contracts.rewardToken, data: permit(user, other), userAddress: user }),
      ).details,
    ).toMatchObject({ field: 'spender', allowedSpenders: [contracts.pointsSale] });
  });

  it('accepts useCharge for the holder only', () => {
    const data = (holder: Address) =>
      encodeFunctionData({ abi: perkNFTAbi, functionName: 'useCharge', args: [holder, 3n, 1n] });
    expect(decodeRelayCall(contracts, { to: contracts.perkNft!, data: data(user), userAddress: user })).toMatchObject({
      kind: 'useCharge',
      amount: 1n,
    });
    expect(
      refusal(() => decodeRelayCall(contracts, { to: contracts.perkNft!, data: data(other), userAddress: user })).code,
    ).toBe('VALIDATION_FAILED');
  });

  it('refuses token-moving functions with the allowed list', () => {
    for (const data of [
      encodeFunctionData({ abi: rewardTokenAbi, functionName: 'transferFrom', args: [other, user, 5n] }),
      encodeFunctionData({ abi: rewardTokenAbi, functionName: 'transfer', args: [other, 5n] }),
      encodeFunctionData({ abi: rewardTokenAbi, functionName: 'approve', args: [other, 5n] }),
    ]) {
      const result = refusal(() => decodeRelayCall(contracts, { to: contracts.rewardToken, data, userAddress: user }));
      expect(result.code).toBe('VALIDATION_FAILED');
      expect(result.details).toMatchObject({ contract: contracts.rewardToken, selector: data.slice(0, 10) });
      expect(result.details.allowedFunctions).toEqual([expect.stringMatching(/^permit\(address,address,uint256/)]);
    }
  });

  it('relays nothing to the business escrow', () => {
    const data = encodeFunctionData({ abi: businessEscrowAbi, functionName: 'withdrawToken', args: [user, 1n] });
    const result = refusal(() =>
      decodeRelayCall(contracts, { to: contracts.businessEscrow!, data, userAddress: user }),
    );
    expect(result).toMatchObject({ code: 'VALIDATION_FAILED', details: { allowedFunctions: [] } });
    expect(allowedFunctionsOf('businessEscrow')).toEqual([]);
  });

  it('refuses other contracts with CONTRACT_NOT_WHITELISTED and the allowed list', () => {
    const result = refusal(() => decodeRelayCall(contracts, { to: other, data: '0x12345678', userAddress: user }));
    expect(result).toMatchObject({
      code: 'CONTRACT_NOT_WHITELISTED',
      status: 403,
      details: { contract: other, allowed: Object.values(contracts) },
    });
  });

  it('refuses an unknown selector and undecodable arguments', () => {
    expect(
      refusal(() => decodeRelayCall(contracts, { to: contracts.pointsSale!, data: '0xdeadbeef', userAddress: user })),
    ).toMatchObject({ code: 'VALIDATION_FAILED', details: { selector: '0xdeadbeef' } });
    const truncated = encodeFunctionData({ abi: pointsSaleAbi, functionName: 'claimPerk', args: [user, 1n] }).slice(
      0,
      40,
    ) as Hex;
    expect(
      refusal(() => decodeRelayCall(contracts, { to: contracts.pointsSale!, data: truncated, userAddress: user })),
    ).toMatchObject({ code: 'INVALID_FORMAT', status: 400, details: { field: 'data' } });
  });
});
