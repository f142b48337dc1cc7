import { describe, expect, it } from 'vitest';
import { formatCents, parseTokens, parseUsdToCents, tokensForCents } from './payment-amounts.ts';

describe('payment amounts (exact integers, 1 USD = 1000 tokens)', () => {
  it.each([
    ['10.00', 1000n],
    ['10', 1000n],
    ['10.5', 1050n],
    ['0.01', 1n],
    ['0', 0n],
    ['10000.00', 1_000_000n],
    ['0.29', 29n],
  ])('parses usd_amount %s as %s cents', (text, cents) => {
    expect(parseUsdToCents(text)).toBe(cents);
  });

  it.each(['', '10.001', '-1.00', '1e3', ' 10.00', '10,00', '010.00', '.5', '10.', 'NaN', '0x10'])(
    'refuses usd_amount %j',
    (text) => {
      expect(parseUsdToCents(text)).toBeUndefined();
    },
  );

  it.each([
    ['10000', 10000n],
    ['0', 0n],
  ])('parses pts_amount %s', (text, tokens) => {
    expect(parseTokens(text)).toBe(tokens);
  });

  it.each(['', '10000.0', '-5', '1e4', '00', ' 1'])('refuses pts_amount %j', (text) => {
    expect(parseTokens(text)).toBeUndefined();
  });

  it.each([
    [1000n, '10.00', 10000n],
    [29n, '0.29', 290n],
    [1_000_000n, '10000.00', 10_000_000n],
    [105n, '1.05', 1050n],
  ])('%s cents formats as %s and buys %s tokens', (cents, text, tokens) => {
    expect(formatCents(cents)).toBe(text);
    expect(tokensForCents(cents)).toBe(tokens);
  });

  it('has no float rounding: 1.15 USD is 115 cents and 1150 tokens', () => {
    expect(Number('1.15') * 100).not.toBe(115); // why floats are not used: 114.99999999999999
    expect(parseUsdToCents('1.15')).toBe(115n);
    expect(tokensForCents(parseUsdToCents('1.15')!)).toBe(1150n);
  });
});
