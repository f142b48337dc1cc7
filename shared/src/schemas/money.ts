import { z } from 'zod';

/**
 * Money as pts takes it (docs/shop-program.md): a decimal string with at most the currency's minor units and
 * an ISO 4217 code, `{"amount": "12.50", "currency": "USD"}`. Internally an amount is a bigint of minor units
 * (cents, yen, fils), so no value ever passes through a float.
 */

/** ISO 4217 minor-unit exponents of the currencies pts accepts (JPY 0, USD 2, KWD 3, ...). */
export const CURRENCY_EXPONENTS = {
  AUD: 2,
  BHD: 3,
  BRL: 2,
  CAD: 2,
  CHF: 2,
  CNY: 2,
  CZK: 2,
  DKK: 2,
  EUR: 2,
  GBP: 2,
  HKD: 2,
  IDR: 2,
  INR: 2,
  ISK: 0,
  JOD: 3,
  JPY: 0,
  KRW: 0,
  KWD: 3,
  MXN: 2,
  NOK: 2,
  NZD: 2,
  OMR: 3,
  PLN: 2,
  SEK: 2,
  SGD: 2,
  TND: 3,
  USD: 2,
  VND: 0,
  ZAR: 2,
} as const;

export type CurrencyCode = keyof typeof CURRENCY_EXPONENTS;
export const CURRENCY_CODES = Object.keys(CURRENCY_EXPONENTS) as [CurrencyCode, ...CurrencyCode[]];

/** A brand's currency when it never set one (docs/shop-program.md, "The brand's currency"). */
export const DEFAULT_BRAND_CURRENCY: CurrencyCode = 'USD';

/** Largest amount accepted, in minor units: far beyond any order, and exact in a JS number too. */
export const MAX_MINOR_UNITS = 10n ** 15n;

export const currencySchema = z.enum(CURRENCY_CODES, {
  error: `must be an ISO 4217 code pts supports: ${CURRENCY_CODES.join(', ')}`,
});

const DECIMAL_PATTERN = /^(0|[1-9]\d{0,17})(\.\d+)?$/;

/** A non-negative decimal string ("12.50", "3", "0.125"); its currency decides how many decimals it may have. */
export const decimalAmountSchema = z
  .string()
  .regex(DECIMAL_PATTERN, 'must be a decimal string such as "12.50" (digits, at most one ".", no sign or exponent)');

/** How many decimals `amount` has. */
function decimalsOf(amount: string): number {
  const dot = amount.indexOf('.');
  return dot === -1 ? 0 : amount.length - dot - 1;
}

/** Why `amount` is not a valid amount of `currency`, or undefined when it is. */
export function amountProblem(amount: string, currency: CurrencyCode): string | undefined {
  if (!DECIMAL_PATTERN.test(amount)) return 'must be a decimal string such as "12.50"';
  const exponent = CURRENCY_EXPONENTS[currency];
  if (decimalsOf(amount) > exponent) {
    return `${currency} has ${exponent} decimal places: "${amount}" has ${decimalsOf(amount)}`;
  }
  if (toMinorUnits(amount, currency) > MAX_MINOR_UNITS)
    return `must be at most ${formatMinorUnits(MAX_MINOR_UNITS, currency)}`;
  return undefined;
}

/** "12.50" USD → 1250n: exact (string digits to bigint), for an amount `amountProblem` accepts. */
export function toMinorUnits(amount: string, currency: CurrencyCode): bigint {
  const exponent = CURRENCY_EXPONENTS[currency];
  const [whole = '0', fraction = ''] = amount.split('.');
  return BigInt(whole) * 10n ** BigInt(exponent) + BigInt(fraction.padEnd(exponent, '0') || '0');
}

/** 1250n USD → "12.50": the amount with exactly the currency's decimals. */
export function formatMinorUnits(minor: bigint, currency: CurrencyCode): string {
  const exponent = CURRENCY_EXPONENTS[currency];
  const sign = minor < 0n ? '-' : '';
  const digits = (minor < 0n ? -minor : minor).toString().padStart(exponent + 1, '0');
  return exponent === 0 ? `${sign}${digits}` : `${sign}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

/** An event's value: `{"amount": "12.50", "currency": "USD"}`, at most the currency's minor units. */
export const valueSchema = z
  .object({
    amount: decimalAmountSchema.meta({ description: 'Decimal string, at most the currency’s minor units ("12.50")' }),
    currency: currencySchema.meta({ description: 'ISO 4217 code; must be the brand’s currency' }),
  })
  .superRefine((value, ctx) => {
    const problem = amountProblem(value.amount, value.currency);
    if (problem) ctx.addIssue({ code: 'custom', path: ['amount'], message: problem });
  })
  .meta({ id: 'Value' });
export type Value = z.infer<typeof valueSchema>;

/** A rule's rate: `pts` per `per` of the currency, e.g. `{"pts": 2, "per": "1.00", "currency": "USD"}`. */
export const rateSchema = z
  .object({
    pts: z.number().int().min(1).max(1_000_000).meta({ description: 'Points paid per `per` of value' }),
    per: decimalAmountSchema.meta({ description: 'The unit of value, e.g. "1.00" or "10"' }),
    currency: currencySchema,
    /** How a fraction of a point is settled: down (the default), nearest (half up) or up. */
    rounding: z.enum(['down', 'nearest', 'up']).optional(),
  })
  .superRefine((rate, ctx) => {
    const problem = amountProblem(rate.per, rate.currency);
    if (problem) ctx.addIssue({ code: 'custom', path: ['per'], message: problem });
    else if (toMinorUnits(rate.per, rate.currency) === 0n) {
      ctx.addIssue({ code: 'custom', path: ['per'], message: 'must be more than 0' });
    }
  })
  .meta({ id: 'Rate' });
export type Rate = z.infer<typeof rateSchema>;

/** A rate as the judge computes with it: minor units, no strings. */
export interface RateTerms {
  pts: number;
  perMinor: bigint;
  currency: CurrencyCode;
  rounding: 'down' | 'nearest' | 'up';
  minValueMinor: bigint | null;
  maxReward: number | null;
}

/**
 * The reward of `valueMinor` under a rate: pts × value / per, rounded as the rate says (down by default), capped
 * at maxReward. Pure bigint arithmetic; the minimum value is the judge's (it refuses below it).
 */
export function rateReward(
  terms: Pick<RateTerms, 'pts' | 'perMinor' | 'rounding' | 'maxReward'>,
  valueMinor: bigint,
): bigint {
  const numerator = BigInt(terms.pts) * valueMinor;
  let reward = numerator / terms.perMinor;
  const remainder = numerator % terms.perMinor;
  if (terms.rounding === 'up' && remainder > 0n) reward += 1n;
  if (terms.rounding === 'nearest' && remainder * 2n >= terms.perMinor) reward += 1n;
  if (terms.maxReward !== null && reward > BigInt(terms.maxReward)) reward = BigInt(terms.maxReward);
  return reward;
}

/** "2 pts per $1.00", "1 pt per 10 JPY": a rate as people read it. */
export function describeRate(rate: Pick<Rate, 'pts' | 'per' | 'currency'>): string {
  const symbols: Partial<Record<CurrencyCode, string>> = { USD: '$', EUR: '€', GBP: '£' };
  const symbol = symbols[rate.currency];
  const per = symbol ? `${symbol}${rate.per}` : `${rate.per} ${rate.currency}`;
  return `${rate.pts} ${rate.pts === 1 ? 'pt' : 'pts'} per ${per}`;
}

/** A rate rule's terms as stored on the rule (event_rules.rate): the rate with its limits. */
export interface StoredRateTerms {
  pts: number;
  per: string;
  currency: string;
  rounding?: Rate['rounding'];
  minValue?: string;
  maxReward?: number;
}

/** A stored rate as every rule view shows it: `rate`, and `minValue` / `maxReward` when set; nothing for a fixed rule. */
export function rateFieldsOf(stored: StoredRateTerms | null): { rate?: Rate; minValue?: string; maxReward?: number } {
  if (!stored) return {};
  const { minValue, maxReward } = stored;
  return {
    rate: {
      pts: stored.pts,
      per: stored.per,
      currency: stored.currency as CurrencyCode,
      rounding: stored.rounding ?? 'down',
    },
    ...(minValue === undefined ? {} : { minValue }),
    ...(maxReward === undefined ? {} : { maxReward }),
  };
}

/** The judge's terms of a stored rate: minor units of its currency. */
export function rateTermsOf(stored: StoredRateTerms): RateTerms {
  const currency = stored.currency as CurrencyCode;
  return {
    pts: stored.pts,
    perMinor: toMinorUnits(stored.per, currency),
    currency,
    rounding: stored.rounding ?? 'down',
    minValueMinor: stored.minValue === undefined ? null : toMinorUnits(stored.minValue, currency),
    maxReward: stored.maxReward ?? null,
  };
}
