/** EIP-2612 `Permit` typed-data types (RewardToken's permit), signed by wallets and checked by the relayer. */
export const PERMIT_TYPES = {
  Permit: [
    { name: 'owner', type: 'address' },
    { name: 'spender', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const;

/**
 * Now in the chain's seconds, for permit deadlines set or checked here. Blocks are stamped with the wall
 * clock; the platform's clock is the same in production, but tests move it, into the past too. A deadline
 * taken from a clock that runs behind would already have passed on chain, so the later of the two counts.
 */
export function chainNowSeconds(clock: { now(): Date }): number {
  return Math.floor(Math.max(clock.now().getTime(), Date.now()) / 1000);
}
