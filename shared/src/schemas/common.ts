import { z } from 'zod';
import { EMAIL_MAX_LENGTH, EMAIL_RULE_MESSAGE, isEmailAddress } from './email.ts';

// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;

/** Removes control characters (spec 2.1: all string inputs are sanitized). */
export function stripControlCharacters(value: string): string {
  return value.replace(CONTROL_CHARACTERS, '');
}

/** Strips control characters from every key and string inside a JSON value (they break storage and logs). */
export function sanitizeJson(value: unknown): unknown {
  if (typeof value === 'string') return stripControlCharacters(value);
  if (Array.isArray(value)) return value.map(sanitizeJson);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [stripControlCharacters(key), sanitizeJson(inner)]),
    );
  }
  return value;
}

/** Free-form metadata: a JSON object whose strings are sanitized like every other input. */
export const metadataSchema = z
  .record(z.string(), z.unknown())
  .transform((value) => sanitizeJson(value) as Record<string, unknown>);

/** A string that is trimmed of control characters before it is validated. */
export function cleanString<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (typeof value === 'string' ? stripControlCharacters(value).trim() : value), schema);
}

export const ADDRESS_PATTERN = /^0x[a-fA-F0-9]{40}$/;
export const TX_HASH_PATTERN = /^0x[a-fA-F0-9]{64}$/;
export const EVENT_TYPE_PATTERN = /^[a-zA-Z0-9_]{1,50}$/;
/** Hostname labels (letters, digits, hyphens), dot separated; `localhost` is a valid single label. */
export const DOMAIN_PATTERN = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/i;

export const addressSchema = z.string().regex(ADDRESS_PATTERN, 'must be 0x followed by 40 hex characters');
/** Brand ids are compared lowercase everywhere. */
export const brandIdSchema = cleanString(addressSchema.transform((value) => value.toLowerCase()));
export const eventTypeSchema = cleanString(
  z.string().regex(EVENT_TYPE_PATTERN, 'must be 1 to 50 letters, digits or underscores'),
);
/** An e-mail address by the one rule of `email.ts` (so `demo@localhost` is one), lowercased. */
export const emailAddressSchema = (message = EMAIL_RULE_MESSAGE) =>
  z
    .string()
    .max(EMAIL_MAX_LENGTH, `must be at most ${EMAIL_MAX_LENGTH} characters`)
    .refine(isEmailAddress, message)
    .transform((value) => value.toLowerCase());
export const emailSchema = cleanString(emailAddressSchema());
export const domainSchema = cleanString(
  z
    .string()
    .max(253, 'must be at most 253 characters')
    .regex(DOMAIN_PATTERN, 'must be a domain name such as shop.example.com')
    .transform((value) => value.toLowerCase()),
);
export const httpUrlSchema = cleanString(
  z
    .string()
    .max(2048, 'must be at most 2048 characters')
    .refine((value) => {
      try {
        const url = new URL(value);
        return url.protocol === 'http:' || url.protocol === 'https:';
      } catch {
        return false;
      }
    }, 'must be an http or https URL'),
);

export const errorEnvelopeSchema = z
  .object({
    success: z.literal(false),
    error: z.string(),
    code: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
    retryAfter: z.number().int().optional(),
  })
  .meta({ id: 'Error' });
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;
