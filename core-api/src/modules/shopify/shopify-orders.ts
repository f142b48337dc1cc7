import { CURRENCY_EXPONENTS, type CurrencyCode, emailSchema, toMinorUnits, type Value, valueSchema } from '@pts/shared';
import { z } from 'zod';

/**
 * What pts reads of Shopify's webhook payloads (the REST Admin API's Order and Customer resources, as
 * `orders/paid` and `customers/create` deliver them). Everything else in them is ignored.
 */

// Shopify's ids are 64-bit: as JSON numbers past 2^53 they lose digits, so the exact id is read from
// `admin_graphql_api_id` when the number is not exact.
const idSchema = z.union([z.number().nonnegative(), z.string().regex(/^\d{1,20}$/)]);
/** `gid://shopify/Order/820982911946154508`: the exact id even where the JSON number lost digits. */
const gidSchema = z.string().regex(/^gid:\/\/shopify\/\w+\/\d{1,20}$/);

const exactId = (resource: { id: number | string; admin_graphql_api_id?: string | undefined }) =>
  resource.admin_graphql_api_id !== undefined || typeof resource.id === 'string' || Number.isSafeInteger(resource.id);
const EXACT_ID = { message: 'is not exact (a number past 2^53) and admin_graphql_api_id is missing', path: ['id'] };

export const shopifyOrderSchema = z
  .object({
    id: idSchema,
    admin_graphql_api_id: gidSchema.optional(),
    name: z.string().max(100).optional(),
    email: z.string().nullish(),
    contact_email: z.string().nullish(),
    customer: z.object({ email: z.string().nullish() }).passthrough().nullish(),
    currency: z.string(),
    subtotal_price: z.string().nullish(),
    total_price: z.string().nullish(),
  })
  .refine(exactId, EXACT_ID);
export type ShopifyOrder = z.infer<typeof shopifyOrderSchema>;

export const shopifyCustomerSchema = z
  .object({
    id: idSchema,
    admin_graphql_api_id: gidSchema.optional(),
    email: z.string().nullish(),
  })
  .refine(exactId, EXACT_ID);
export type ShopifyCustomer = z.infer<typeof shopifyCustomerSchema>;

/** The resource's id as a string, exact: from its GraphQL id when present (a JSON number past 2^53 is not). */
export function shopifyIdOf(resource: { id: number | string; admin_graphql_api_id?: string | undefined }): string {
  const fromGid = resource.admin_graphql_api_id?.split('/').pop();
  return fromGid ?? String(resource.id);
}

/** The first of the order's e-mails that is a valid address: the order's, its contact's, its customer's. */
export function customerEmailOf(candidates: (string | null | undefined)[]): string | undefined {
  for (const candidate of candidates) {
    const parsed = emailSchema.safeParse(candidate ?? undefined);
    if (parsed.success) return parsed.data;
  }
  return undefined;
}

/**
 * The order's value as pts takes it, or why it cannot be one. Shopify writes amounts as decimal strings in the
 * shop's currency (`currency`, the shop money, not `presentment_currency`); trailing zeros past the currency's
 * minor units ("1000.00" JPY) are dropped, never rounded.
 */
export function orderValueOf(
  order: ShopifyOrder,
  source: 'subtotal' | 'total',
): { value: Value } | { problem: string } {
  const amount = source === 'subtotal' ? order.subtotal_price : order.total_price;
  const field = source === 'subtotal' ? 'subtotal_price' : 'total_price';
  if (amount === undefined || amount === null) return { problem: `the order has no ${field}` };
  const currency = order.currency.toUpperCase();
  const exponent = (CURRENCY_EXPONENTS as Record<string, number>)[currency];
  if (exponent === undefined) return { problem: `the order's currency ${order.currency} is not one pts supports` };
  const parsed = valueSchema.safeParse({ amount: trimZeros(amount, exponent), currency: currency as CurrencyCode });
  if (!parsed.success) {
    return { problem: `the order's ${field} "${amount}" ${parsed.error.issues[0]?.message ?? 'is not an amount'}` };
  }
  return { value: parsed.data };
}

function trimZeros(amount: string, exponent: number): string {
  const dot = amount.indexOf('.');
  if (dot === -1) return amount;
  const fraction = amount.slice(dot + 1);
  const kept = fraction.slice(0, exponent);
  if (!/^0*$/.test(fraction.slice(exponent))) return amount;
  return kept.length > 0 ? `${amount.slice(0, dot)}.${kept}` : amount.slice(0, dot);
}

/** An amount as Shopify writes it: a decimal string, or (in `refund_line_items[].subtotal`) a JSON number. */
const moneyAmountSchema = z.union([z.string(), z.number().nonnegative()]).transform(String);
const moneySetSchema = z
  .object({ shop_money: z.object({ amount: moneyAmountSchema, currency_code: z.string() }).passthrough() })
  .passthrough();

/** What pts reads of a `refunds/create` body (the REST Admin API's Refund resource). */
export const shopifyRefundSchema = z
  .object({
    id: idSchema,
    admin_graphql_api_id: gidSchema.optional(),
    order_id: idSchema,
    refund_line_items: z
      .array(z.object({ subtotal: moneyAmountSchema.nullish(), subtotal_set: moneySetSchema.nullish() }).passthrough())
      .default([]),
    transactions: z
      .array(
        z
          .object({
            amount: moneyAmountSchema,
            kind: z.string(),
            status: z.string().nullish(),
            currency: z.string().nullish(),
          })
          .passthrough(),
      )
      .default([]),
  })
  .refine(exactId, EXACT_ID);
export type ShopifyRefund = z.infer<typeof shopifyRefundSchema>;

/**
 * The refund's order id, exact. A refund names its order only by the JSON number `order_id` (and the same number
 * in each transaction): past 2^53 `JSON.parse` loses digits, so the digits are then read from the raw body, and
 * only when every `"order_id"` in it is the same number.
 */
export function refundOrderIdOf(refund: ShopifyRefund, rawBody: string): string | { problem: string } {
  if (typeof refund.order_id === 'string' || Number.isSafeInteger(refund.order_id)) return String(refund.order_id);
  const written = new Set([...rawBody.matchAll(/"order_id"\s*:\s*"?(\d{1,20})"?/g)].map((match) => match[1]));
  const [digits] = [...written];
  if (written.size !== 1 || digits === undefined || Number(digits) !== refund.order_id) {
    return { problem: 'the refund names its order by an order_id past 2^53 that is not written exactly once' };
  }
  return digits;
}

/**
 * What the refund gives back of the order's value, as pts took it (docs/shop-program.md "Refunds from Shopify"):
 * for `subtotal`, the sum of `refund_line_items[].subtotal_set.shop_money` (else `subtotal`, in `fallback`): the
 * goods' price after discounts, before taxes and shipping, in the shop's currency, as `subtotal_price` was; for
 * `total`, the sum of the successful `refund` transactions: the money returned, taxes and shipping included, as
 * `total_price` counted them. Its currency is the amounts' one (all must agree); undefined when nothing is refunded.
 */
export function refundValueOf(
  refund: ShopifyRefund,
  source: 'subtotal' | 'total',
  fallback: string,
): { minor: bigint; currency: CurrencyCode | undefined } | { problem: string } {
  const amounts: { amount: string; currency: string }[] =
    source === 'subtotal'
      ? refund.refund_line_items.map((line) =>
          line.subtotal_set
            ? { amount: line.subtotal_set.shop_money.amount, currency: line.subtotal_set.shop_money.currency_code }
            : { amount: line.subtotal ?? '0', currency: fallback },
        )
      : refund.transactions
          .filter((transaction) => transaction.kind === 'refund' && (transaction.status ?? 'success') === 'success')
          .map((transaction) => ({ amount: transaction.amount, currency: transaction.currency ?? fallback }));
  let minor = 0n;
  let currency: CurrencyCode | undefined;
  for (const item of amounts) {
    const code = item.currency.toUpperCase();
    const exponent = (CURRENCY_EXPONENTS as Record<string, number>)[code];
    if (exponent === undefined) return { problem: `the refund's currency ${item.currency} is not one pts supports` };
    if (currency !== undefined && code !== currency) {
      return { problem: `the refund mixes ${currency} and ${code}: pts converts no currencies` };
    }
    currency = code as CurrencyCode;
    const parsed = valueSchema.safeParse({ amount: trimZeros(item.amount, exponent), currency });
    if (!parsed.success) {
      return {
        problem: `the refund's amount "${item.amount}" ${parsed.error.issues[0]?.message ?? 'is not an amount'}`,
      };
    }
    minor += toMinorUnits(parsed.data.amount, currency);
  }
  return { minor, currency };
}
