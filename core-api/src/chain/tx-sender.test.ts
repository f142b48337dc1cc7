import { describe, expect, it } from 'vitest';
import { bumpFee, errorReason, errorText, replacementFees } from './tx-sender.ts';

const gwei = (n: number) => BigInt(Math.round(n * 1e9));

describe('replacementFees', () => {
  it('bumps both fields by 25% (+1 wei) when the network is lower', () => {
    const previous = { maxFeePerGas: gwei(10), maxPriorityFeePerGas: gwei(1) };
    expect(replacementFees(previous, { maxFeePerGas: gwei(5), maxPriorityFeePerGas: gwei(0.5) })).toEqual({
      maxFeePerGas: bumpFee(gwei(10)),
      maxPriorityFeePerGas: bumpFee(gwei(1)),
    });
  });

  it('follows the network when it rose more than 25%', () => {
    const previous = { maxFeePerGas: gwei(10), maxPriorityFeePerGas: gwei(1) };
    expect(replacementFees(previous, { maxFeePerGas: gwei(30), maxPriorityFeePerGas: gwei(3) })).toEqual({
      maxFeePerGas: gwei(30),
      maxPriorityFeePerGas: gwei(3),
    });
  });

  it('never lets the tip exceed the fee cap; with a price cap the fee cap is not raised to the tip', () => {
    const previous = { maxFeePerGas: gwei(10), maxPriorityFeePerGas: gwei(1) };
    const capped = replacementFees(previous, { maxFeePerGas: gwei(11), maxPriorityFeePerGas: gwei(20) }, gwei(14));
    expect(capped).toEqual({ maxFeePerGas: bumpFee(gwei(10)), maxPriorityFeePerGas: bumpFee(gwei(10)) });
    const uncapped = replacementFees(previous, { maxFeePerGas: gwei(11), maxPriorityFeePerGas: gwei(20) });
    expect(uncapped).toEqual({ maxFeePerGas: gwei(20), maxPriorityFeePerGas: gwei(20) });
  });

  it('gives up when the cap leaves less than the +12.5% nodes require', () => {
    const previous = { maxFeePerGas: gwei(10), maxPriorityFeePerGas: gwei(1) };
    expect(replacementFees(previous, { maxFeePerGas: gwei(5), maxPriorityFeePerGas: gwei(1) }, gwei(11))).toBe(
      undefined,
    );
    expect(
      replacementFees(previous, { maxFeePerGas: gwei(5), maxPriorityFeePerGas: gwei(1) }, gwei(11.25)),
    ).toBeDefined();
  });
});

describe('error texts', () => {
  const nested = Object.assign(new Error('Transaction failed.\n\nRequest body: {...}\nVersion: viem'), {
    shortMessage: 'Nonce provided for the transaction is lower than the current nonce of the account.',
    details: 'nonce too low',
    cause: { message: 'RPC error', details: 'nonce too low: next nonce 7, tx nonce 5' },
  });

  it('errorText keeps every message and detail along the cause chain', () => {
    const text = errorText(nested);
    expect(text).toContain('Request body');
    expect(text).toContain('next nonce 7');
  });

  it('errorReason prefers the short message, keeps the node details, and stays under 500 characters', () => {
    const reason = errorReason(nested);
    expect(reason).toMatch(/^Nonce provided for the transaction is lower/);
    expect(reason).not.toContain('Request body');
    expect(reason).toContain('next nonce 7');
    expect(errorReason(new Error('x'.repeat(2000)))).toHaveLength(500);
  });
});
