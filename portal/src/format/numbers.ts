/**
 * Every figure the portal shows goes through these formatters (issue 33 §13): thousands separators
 * everywhere, exact for the decimal strings money arrives as, compact only on chart axes.
 */

const whole = new Intl.NumberFormat('en-US');
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const sixSignificant = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 6 });

/** A count: `1234567` → `1,234,567`. */
export function formatCount(value: number): string {
  return whole.format(value);
}

/**
 * A decimal string, exactly (pts and USD arrive as strings so nothing is rounded): `"600000"` → `"600,000"`,
 * `"1250.50"` → `"1,250.50"`. Anything that is not a plain decimal is shown as it came.
 */
export function formatDecimal(value: string): string {
  const match = /^(-?)(\d+)(\.\d+)?$/.exec(value.trim());
  if (!match) return value;
  const [, sign, integer, fraction = ''] = match;
  return `${sign}${whole.format(BigInt(integer as string))}${fraction}`;
}

/** Whole pts, exact: `"600000"` → `"600,000"`. */
export const formatPts = formatDecimal;

/**
 * An amount of ETH (a decimal string with up to 18 decimals) to at most six significant digits:
 * `"0.000123456789012345678"` → `"0.000123457 ETH"`, `"1234.5"` → `"1,234.5 ETH"`. Gas costs are read
 * at a glance; the exact wei stay in the API's answer.
 */
export function formatEth(value: string): string {
  const amount = Number(value);
  if (!Number.isFinite(amount)) return `${value} ETH`;
  return `${sixSignificant.format(amount)} ETH`;
}

/**
 * A chart axis label: whole below 10,000 (`"9,500"`), compact above (`"600K"`, `"1.2M"`), so a label is at
 * most a handful of characters at any magnitude.
 */
export function formatAxisValue(value: number): string {
  return Math.abs(value) < 10_000 ? whole.format(value) : compact.format(value);
}

/**
 * An amount of money, exactly (a decimal string in an ISO 4217 currency, as the API sends it), with the
 * currency's symbol where it has one: `("1.00", "USD")` → `"$1.00"`, `("1250.5", "EUR")` → `"€1,250.5"`,
 * `("10", "JPY")` → `"¥10"`. The digits never pass through a float.
 */
export function formatMoney(amount: string, currency: string): string {
  let parts: Intl.NumberFormatPart[];
  try {
    parts = new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency,
      currencyDisplay: 'narrowSymbol',
    }).formatToParts(0);
  } catch {
    return `${formatDecimal(amount)} ${currency}`;
  }
  const symbol = parts.find((part) => part.type === 'currency')?.value ?? currency;
  const before =
    parts.findIndex((part) => part.type === 'currency') < parts.findIndex((part) => part.type === 'integer');
  const digits = formatDecimal(amount);
  if (symbol === currency) return `${digits} ${currency}`;
  return before ? `${symbol}${digits}` : `${digits} ${symbol}`;
}

/** A rate rule's rate as people read it: `{pts: 2, per: "1.00", currency: "USD"}` → `"2 pts per $1.00"`. */
export function formatRate(rate: { pts: number; per: string; currency: string }): string {
  return `${formatCount(rate.pts)} ${rate.pts === 1 ? 'pt' : 'pts'} per ${formatMoney(rate.per, rate.currency)}`;
}
