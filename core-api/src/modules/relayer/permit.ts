import { AppError } from '@pts/shared';
import { type Address, isAddressEqual, recoverTypedDataAddress, serializeSignature } from 'viem';
import { PERMIT_TYPES } from '../../chain/permit-types.ts';
import type { PermitParts } from './relay-policy.ts';

export { PERMIT_TYPES } from '../../chain/permit-types.ts';

/** EIP-712 domain of the reward token (`eip712Domain()`: name = the token name, version "1"). */
export interface PermitDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

export interface PermitCheck {
  permit: PermitParts;
  /** The authenticated caller's wallet: the permit's owner must be it. */
  userAddress: Address;
  /** Contracts the permit may approve. */
  allowedSpenders: Address[];
  /** The token's current `nonces(owner)`: the nonce the signature must cover. */
  nonce: bigint;
  domain: PermitDomain;
  /** Current time, Unix seconds (the platform clock). */
  nowSeconds: number;
  /** The value the call needs approved, when one is known (a perk's price). */
  minimumValue?: bigint;
}

function refuse(reason: string, message: string, details: Record<string, unknown> = {}): never {
  throw new AppError('VALIDATION_FAILED', `Permit refused: ${message}`, { reason, field: 'permit', ...details });
}

/** `v` as 27/28; wallets also produce 0/1. */
export function normalizeV(v: number): number {
  return v < 27 ? v + 27 : v;
}

/** Who signed `permit` with `nonce` under `domain`; throws when the signature is malformed. */
export async function recoverPermitSigner(permit: PermitParts, nonce: bigint, domain: PermitDomain): Promise<Address> {
  return recoverTypedDataAddress({
    domain,
    types: PERMIT_TYPES,
    primaryType: 'Permit',
    message: {
      owner: permit.owner,
      spender: permit.spender,
      value: permit.value,
      nonce,
      deadline: permit.deadline,
    },
    signature: serializeSignature({ r: permit.r, s: permit.s, v: BigInt(normalizeV(permit.v)) }),
  });
}

/**
 * Validates an EIP-2612 permit off-chain before any gas is spent (docs/relayer.md "Permits"): owner = the
 * caller's wallet, spender whitelisted, value covers what the call needs, deadline in the future, and the
 * signature recovers to the owner over the token's domain and current nonce. Throws 403 VALIDATION_FAILED
 * with `details.reason` naming what is wrong.
 */
export async function verifyPermit(check: PermitCheck): Promise<void> {
  const { permit } = check;
  if (!isAddressEqual(permit.owner, check.userAddress)) {
    refuse('owner_mismatch', `owner ${permit.owner} is not your wallet ${check.userAddress}`, {
      owner: permit.owner,
      expected: check.userAddress,
    });
  }
  if (!check.allowedSpenders.some((spender) => isAddressEqual(spender, permit.spender))) {
    refuse('spender_not_allowed', `spender ${permit.spender} is not allowed`, {
      spender: permit.spender,
      allowedSpenders: check.allowedSpenders,
    });
  }
  if (check.minimumValue !== undefined && permit.value < check.minimumValue) {
    refuse('value_too_low', `value ${permit.value} is below the ${check.minimumValue} the call needs`, {
      value: permit.value.toString(),
      required: check.minimumValue.toString(),
    });
  }
  if (permit.deadline <= BigInt(check.nowSeconds)) {
    refuse('expired', `deadline ${permit.deadline} has passed (now ${check.nowSeconds}); sign a new permit`, {
      deadline: Number(permit.deadline),
      now: check.nowSeconds,
    });
  }
  if (![0, 1, 27, 28].includes(permit.v)) {
    refuse('bad_signature', `v must be 27 or 28 (or 0 or 1), got ${permit.v}`);
  }
  let signer: Address;
  try {
    signer = await recoverPermitSigner(permit, check.nonce, check.domain);
  } catch (error) {
    refuse('bad_signature', `the signature does not decode (${error instanceof Error ? error.message : error})`);
  }
  if (!isAddressEqual(signer, permit.owner)) {
    refuse(
      'bad_signature',
      `the signature does not recover to the owner over the token's permit (nonce ${check.nonce}, chain ${check.domain.chainId}, token ${check.domain.verifyingContract}); sign the current nonce again`,
      { nonce: check.nonce.toString(), recovered: signer },
    );
  }
}
