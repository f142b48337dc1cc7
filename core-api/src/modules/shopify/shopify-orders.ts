import { CURRENCY_EXPONENTS, type CurrencyCode, emailSchema, type Value, valueSchema } from '@pts/shared';
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
