import { AppError } from '@pts/shared';
import {
  type Abi,
  type AbiFunction,
  type Address,
  decodeFunctionData,
  getAddress,
  type Hex,
  isAddressEqual,
  toFunctionSelector,
} from 'viem';
import { businessEscrowAbi, perkNFTAbi, pointsSaleAbi, rewardTokenAbi } from '../../chain/artifacts/index.ts';
import type { RelayContracts } from '../../chain/contract-addresses.ts';

export type { RelayContracts } from '../../chain/contract-addresses.ts';

export type RelayContractName = keyof RelayContracts;

/**
 * Functions the relayer sends for a user, per contract (docs/relayer.md "Relay endpoint"). Everything else on
 * a whitelisted contract is refused, most importantly every function that moves tokens out of an account other
 * than through a claim the account's owner asked for.
 *
 * - PointsSale `claimPerk(user, id)` and `claimPerkWithPermit(user, id, deadline, v, r, s)`: `user` must be the
 *   caller's wallet (the sale pulls the price from `user`'s allowance).
 * - RewardToken `permit(owner, spender, …)`: `owner` must be the caller's wallet and `spender` PointsSale, the
 *   only contract that spends a user's allowance.
 * - PerkNFT `useCharge(holder, id, amount)`: `holder` must be the caller's wallet (a holder spending their own
 *   charge; brands redeem through `POST /redeem-perk` instead).
 * - BusinessEscrow: nothing. Brands withdraw with their own key and pay their own gas.
 */
export const RELAYABLE_FUNCTIONS = {
  rewardToken: ['permit'],
  perkNft: ['useCharge'],
  pointsSale: ['claimPerk', 'claimPerkWithPermit'],
  businessEscrow: [],
} as const satisfies Record<RelayContractName, readonly string[]>;

const ABIS: Record<RelayContractName, Abi> = {
  rewardToken: rewardTokenAbi,
  perkNft: perkNFTAbi,
  pointsSale: pointsSaleAbi,
  businessEscrow: businessEscrowAbi,
};

/** A permit's signed parts, as found in call data or in `metadata.permit`. */
export interface PermitParts {
  owner: Address;
  spender: Address;
  value: bigint;
  deadline: bigint;
  v: number;
  r: Hex;
  s: Hex;
}

/** A relayable call, decoded and checked against the caller's wallet. */
export type RelayCall =
  | { kind: 'claimPerk'; contract: 'pointsSale'; to: Address; user: Address; collectionId: bigint }
  | {
      kind: 'claimPerkWithPermit';
      contract: 'pointsSale';
      to: Address;
      user: Address;
      collectionId: bigint;
      /** Value is the collection's price at execution (the contract signs the permit for exactly that). */
      permit: Omit<PermitParts, 'value'>;
    }
  | { kind: 'permit'; contract: 'rewardToken'; to: Address; permit: PermitParts }
  | { kind: 'useCharge'; contract: 'perkNft'; to: Address; holder: Address; collectionId: bigint; amount: bigint };

/** `name(type,…)` of a function, the way `allowedFunctions` lists them. */
function signatureOf(item: AbiFunction): string {
  return `${item.name}(${item.inputs.map((input) => input.type).join(',')})`;
}

function functionsOf(contract: RelayContractName): AbiFunction[] {
  return ABIS[contract].filter((item): item is AbiFunction => item.type === 'function');
}

/** `allowedFunctions` of a contract with their selectors, for error details and the docs. */
export function allowedFunctionsOf(contract: RelayContractName): string[] {
  const names: readonly string[] = RELAYABLE_FUNCTIONS[contract];
  return functionsOf(contract)
    .filter((item) => names.includes(item.name))
    .map((item) => `${signatureOf(item)} ${toFunctionSelector(item)}`);
}

/** Which whitelisted contract `to` is, or 403 CONTRACT_NOT_WHITELISTED listing the allowed addresses. */
export function whitelistedContract(contracts: RelayContracts, to: Address): RelayContractName {
  const entries = Object.entries(contracts).filter((entry): entry is [RelayContractName, Address] => !!entry[1]);
  const match = entries.find(([, address]) => isAddressEqual(address, to));
  if (match) return match[0];
  throw new AppError(
    'CONTRACT_NOT_WHITELISTED',
    `Contract ${to} is not whitelisted; the relayer only calls the reward token, the perk NFT, the points sale and the business escrow`,
    { contract: to, allowed: entries.map(([, address]) => address) },
  );
}

function refuse(message: string, details: Record<string, unknown>): never {
  throw new AppError('VALIDATION_FAILED', message, details);
}

function mustBeUser(role: string, value: Address, userAddress: Address, details: Record<string, unknown>): void {
  if (!isAddressEqual(value, userAddress)) {
    refuse(`The call's ${role} ${value} is not your wallet ${userAddress}; you can only relay calls for yourself`, {
      ...details,
      field: role,
      value,
      expected: userAddress,
    });
  }
}

/**
 * Decodes `data` against `to`'s ABI and checks it may be relayed for `userAddress`: the contract is whitelisted
 * (403 CONTRACT_NOT_WHITELISTED), the selector is relayable (403 VALIDATION_FAILED with `allowedFunctions`),
 * the arguments decode (400 INVALID_FORMAT) and every user-bound argument is the caller's wallet (403).
 */
export function decodeRelayCall(
  contracts: RelayContracts,
  input: { to: Address; data: Hex; userAddress: Address },
): RelayCall {
  const contract = whitelistedContract(contracts, input.to);
  const to = getAddress(input.to);
  const selector = input.data.slice(0, 10).toLowerCase() as Hex;
  const allowedNames: readonly string[] = RELAYABLE_FUNCTIONS[contract];
  const item = functionsOf(contract).find((fn) => toFunctionSelector(fn) === selector);
  const base = { contract: to, selector, allowedFunctions: allowedFunctionsOf(contract) };
  if (!item || !allowedNames.includes(item.name)) {
    const what = item ? `${signatureOf(item)}` : `selector ${selector}`;
    refuse(
      allowedNames.length === 0
        ? `The relayer sends nothing to the ${contract} contract (${what} refused)`
        : `${what} on the ${contract} contract is not relayable`,
      base,
    );
  }
  let args: readonly unknown[];
  try {
    ({ args = [] } = decodeFunctionData({ abi: [item], data: input.data }));
  } catch (error) {
    throw new AppError('INVALID_FORMAT', `data does not decode as ${signatureOf(item)}`, {
      field: 'data',
      errors: [`data: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`],
      function: signatureOf(item),
    });
  }
  const details = { contract: to, selector, function: signatureOf(item) };
  const user = input.userAddress;
  switch (item.name) {
    case 'claimPerk': {
      const [claimant, collectionId] = args as [Address, bigint];
      mustBeUser('user', claimant, user, details);
      return { kind: 'claimPerk', contract: 'pointsSale', to, user: getAddress(claimant), collectionId };
    }
    case 'claimPerkWithPermit': {
      const [claimant, collectionId, deadline, v, r, s] = args as [Address, bigint, bigint, number, Hex, Hex];
      mustBeUser('user', claimant, user, details);
      return {
        kind: 'claimPerkWithPermit',
        contract: 'pointsSale',
        to,
        user: getAddress(claimant),
        collectionId,
        permit: { owner: getAddress(claimant), spender: to, deadline, v, r, s },
      };
    }
    case 'permit': {
      const [owner, spender, value, deadline, v, r, s] = args as [Address, Address, bigint, bigint, number, Hex, Hex];
      mustBeUser('owner', owner, user, details);
      if (!contracts.pointsSale || !isAddressEqual(spender, contracts.pointsSale)) {
        refuse(`A relayed permit may only approve the points-sale contract, not ${spender}`, {
          ...details,
          field: 'spender',
          value: spender,
          allowedSpenders: contracts.pointsSale ? [contracts.pointsSale] : [],
        });
      }
      return {
        kind: 'permit',
        contract: 'rewardToken',
        to,
        permit: { owner: getAddress(owner), spender: getAddress(spender), value, deadline, v, r, s },
      };
    }
    case 'useCharge': {
      const [holder, collectionId, amount] = args as [Address, bigint, bigint];
      mustBeUser('tokenHolder', holder, user, details);
      return { kind: 'useCharge', contract: 'perkNft', to, holder: getAddress(holder), collectionId, amount };
    }
    default:
      return refuse(`${signatureOf(item)} is not relayable`, base);
  }
}
