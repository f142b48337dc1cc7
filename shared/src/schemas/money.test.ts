import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CURRENCY_CODES,
  CURRENCY_EXPONENTS,
  type CurrencyCode,
  formatMinorUnits,
  rateReward,
  rateSchema,
  toMinorUnits,
  valueSchema,
} from './money.ts';

const currency = fc.constantFrom(...CURRENCY_CODES);
const minor = fc.bigInt({ min: 0n, max: 10n ** 12n });
const terms = fc.record({
  pts: fc.integer({ min: 1, max: 1000 }),
  perMinor: fc.bigInt({ min: 1n, max: 100_000n }),
  rounding: fc.constantFrom('down' as const, 'nearest' as const, 'up' as const),
  maxReward: fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: null }),
});

describe('money values', () => {
  it.each([
    ['12.50', 'USD', 1250n],
    ['12.5', 'USD', 1250n],
    ['0.01', 'USD', 1n],
    ['1200', 'JPY', 1200n],
    ['1.234', 'KWD', 1234n],
    ['0', 'EUR', 0n],
  ] as const)('reads %s %s as %s minor units', (amount, code, expected) => {
    expect(valueSchema.parse({ amount, currency: code })).toEqual({ amount, currency: code });
    expect(toMinorUnits(amount, code)).toBe(expected);
  });

  it.each([
    ['12.505', 'USD', 'USD has 2 decimal places: "12.505" has 3'],
    ['1.5', 'JPY', 'JPY has 0 decimal places: "1.5" has 1'],
    ['1.2345', 'KWD', 'KWD has 3 decimal places: "1.2345" has 4'],
    ['-1.00', 'USD', 'must be a decimal string'],
    ['1e3', 'USD', 'must be a decimal string'],
    ['12.50', 'XXX', 'must be an ISO 4217 code'],
  ])('refuses %s %s, saying %s', (amount, code, message) => {
    const result = valueSchema.safeParse({ amount, currency: code });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.message).join('; ')).toContain(message);
  });

  it('formats and reads back every amount of every currency exactly (ISO 4217 exponents)', () => {
    fc.assert(
      fc.property(currency, minor, (code, units) => {
        const text = formatMinorUnits(units, code);
        const decimals = text.includes('.') ? text.length - text.indexOf('.') - 1 : 0;
        expect(decimals).toBe(CURRENCY_EXPONENTS[code]);
        expect(valueSchema.safeParse({ amount: text, currency: code }).success).toBe(true);
        expect(toMinorUnits(text, code)).toBe(units);
      }),
    );
  });

  it('refuses a rate whose unit is zero or has too many decimals', () => {
    expect(rateSchema.safeParse({ pts: 2, per: '0.00', currency: 'USD' }).error?.issues[0]?.message).toBe(
      'must be more than 0',
    );
    expect(rateSchema.safeParse({ pts: 2, per: '0.001', currency: 'USD' }).success).toBe(false);
    expect(rateSchema.safeParse({ pts: 1, per: '10', currency: 'JPY' }).success).toBe(true);
  });
});

describe('rate rewards', () => {
  it('pays floor(pts × value / per) by default: 2 pts per $1.00 of $12.99 is 25', () => {
    const rate = { pts: 2, perMinor: 100n, rounding: 'down' as const, maxReward: null };
    expect(rateReward(rate, toMinorUnits('12.99', 'USD'))).toBe(25n);
    expect(rateReward({ ...rate, pts: 1, perMinor: 1000n }, toMinorUnits('9.99', 'USD'))).toBe(0n);
    expect(rateReward({ ...rate, rounding: 'nearest', perMinor: 1000n, pts: 1 }, toMinorUnits('15.00', 'USD'))).toBe(
      2n,
    );
    expect(rateReward({ ...rate, rounding: 'up', perMinor: 1000n, pts: 1 }, toMinorUnits('10.01', 'USD'))).toBe(2n);
  });

  it('is exact with no float drift: three events of "0.10" at 10 pts per $0.30 earn what one of "0.30" does', () => {
    const rate = { pts: 10, perMinor: 30n, rounding: 'down' as const, maxReward: null };
    const tenCents = toMinorUnits('0.10', 'USD');
    expect(rateReward(rate, tenCents * 3n)).toBe(10n);
    // 0.1 + 0.1 + 0.1 is 0.30000000000000004 in floats: minor units add exactly.
    expect(tenCents + tenCents + tenCents).toBe(toMinorUnits('0.30', 'USD'));
    expect(rateReward(rate, tenCents)).toBe(3n);
  });

  it('equals the exact rational pts × value / per rounded as asked, never above maxReward', () => {
    fc.assert(
      fc.property(terms, minor, (rate, value) => {
        const reward = rateReward(rate, value);
        const exact = BigInt(rate.pts) * value;
        const floor = exact / rate.perMinor;
        const ceil = floor + (exact % rate.perMinor === 0n ? 0n : 1n);
        const uncapped =
          rate.rounding === 'down'
            ? floor
            : rate.rounding === 'up'
              ? ceil
              : (exact % rate.perMinor) * 2n >= rate.perMinor
                ? floor + 1n
                : floor;
        const cap = rate.maxReward === null ? uncapped : BigInt(rate.maxReward);
        expect(reward).toBe(uncapped < cap ? uncapped : cap);
        expect(reward >= 0n).toBe(true);
        if (rate.maxReward !== null) expect(reward <= BigInt(rate.maxReward)).toBe(true);
        // Rounding down never pays more than the value earns.
        if (rate.rounding === 'down') expect(reward * rate.perMinor <= exact).toBe(true);
      }),
    );
  });

  it('is monotone in value: more spent never earns less', () => {
    fc.assert(
      fc.property(terms, minor, minor, (rate, a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        expect(rateReward(rate, low) <= rateReward(rate, high)).toBe(true);
      }),
    );
  });

  it('pays the same for the same value written in any currency with the same exponent', () => {
    fc.assert(
      fc.property(minor, fc.constantFrom<CurrencyCode>('USD', 'EUR', 'GBP'), (units, code) => {
        const rate = { pts: 2, perMinor: 100n, rounding: 'down' as const, maxReward: null };
        expect(rateReward(rate, toMinorUnits(formatMinorUnits(units, code), code))).toBe((units * 2n) / 100n);
      }),
    );
  });
});
