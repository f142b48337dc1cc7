/**
 * Exact money arithmetic for token purchases: USD is handled as integer cents, tokens as integers, never
 * as floating point. 1 USD = 1000 tokens (spec 1 item 4, 8), so 1 cent = 10 tokens.
 */

/** Tokens bought per USD cent. */
export const PTS_PER_CENT = 10n;

const USD_PATTERN = /^(0|[1-9]\d{0,11})(?:\.(\d{1,2}))?$/;
const TOKENS_PATTERN = /^(0|[1-9]\d{0,17})$/;

/** `"10.00"` → `1000n` cents. Undefined for anything that is not a plain non-negative dollar amount. */
export function parseUsdToCents(value: string): bigint | undefined {
  const match = USD_PATTERN.exec(value);
  if (!match) return undefined;
  const cents = (match[2] ?? '').padEnd(2, '0');
  return BigInt(match[1]!) * 100n + BigInt(cents);
}

/** `"10000"` → `10000n`. Undefined for anything but a plain non-negative whole number. */
export function parseTokens(value: string): bigint | undefined {
  return TOKENS_PATTERN.test(value) ? BigInt(value) : undefined;
}

/** `1000n` → `"10.00"`. */
export function formatCents(cents: bigint): string {
  const sign = cents < 0n ? '-' : '';
  const abs = cents < 0n ? -cents : cents;
  return `${sign}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
}

/** Tokens a purchase of `cents` buys. */
export function tokensForCents(cents: bigint): bigint {
  return cents * PTS_PER_CENT;
}
