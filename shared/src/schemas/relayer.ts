import { z } from 'zod';
import { ADDRESS_PATTERN, TX_HASH_PATTERN } from './common.ts';

/** Fields `POST /relay` cannot do without (spec 2.5); their absence is 400 MISSING_FIELDS. */
export const RELAY_REQUIRED_FIELDS = ['to', 'data', 'userAddress'] as const;

/** Largest gas limit a relayed transaction may ask for (spec 4.9 rule 6). */
export const RELAY_MAX_GAS_LIMIT = 1_000_000;

/** Largest relay request body, in bytes. */
export const RELAY_BODY_LIMIT_BYTES = 16 * 1024;

/** Call data: `0x` and at least a 4-byte selector, whole bytes; at most what fits the body limit. */
const CALLDATA_PATTERN = /^0x(?:[a-fA-F0-9]{2}){4,}$/;
const BYTES32_PATTERN = /^0x[a-fA-F0-9]{64}$/;
const UINT_PATTERN = /^(0|[1-9][0-9]{0,77})$/;

const address = z.string().regex(ADDRESS_PATTERN, 'must be 0x followed by 40 hex characters');
const uintString = z.string().regex(UINT_PATTERN, 'must be a whole number in decimal digits, e.g. "0" or "100"');

/** EIP-2612 permit the user signed (spec 2.5); the nonce is implicit: the token's current `nonces(owner)`. */
export const relayPermitSchema = z
  .object({
    owner: address,
    spender: address,
    value: uintString,
    deadline: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    v: z.number().int().min(0).max(255),
    r: z.string().regex(BYTES32_PATTERN, 'must be 0x followed by 64 hex characters'),
    s: z.string().regex(BYTES32_PATTERN, 'must be 0x followed by 64 hex characters'),
  })
  .meta({ id: 'RelayPermit' });
export type RelayPermit = z.infer<typeof relayPermitSchema>;

/** Optional hints (spec 2.5). The server decodes the call itself; `action` and `perkId` are only recorded. */
export const relayMetadataSchema = z
  .object({
    action: z.string().max(100).optional(),
    perkId: z.string().max(100).optional(),
    permit: relayPermitSchema.optional(),
  })
  .meta({ id: 'RelayMetadata' });

/** `POST /relay` body (spec 2.5). */
export const relayRequestSchema = z
  .object({
    to: address,
    data: z
      .string()
      .max(RELAY_BODY_LIMIT_BYTES)
      .regex(CALLDATA_PATTERN, 'must be 0x followed by hex call data (a 4-byte selector and its arguments)'),
    value: uintString.default('0'),
    gasLimit: z
      .number()
      .int()
      .min(21_000, 'must be at least 21000')
      .max(RELAY_MAX_GAS_LIMIT, `must be at most ${RELAY_MAX_GAS_LIMIT}`)
      .optional(),
    userAddress: address,
    metadata: relayMetadataSchema.optional(),
  })
  .meta({ id: 'RelayRequest' });
export type RelayRequest = z.output<typeof relayRequestSchema>;
export type RelayRequestInput = z.input<typeof relayRequestSchema>;

/** Relay status as answered (spec 3): `pending` until mined and confirmed. */
export const RELAY_STATUSES = ['pending', 'confirmed', 'failed'] as const;
/** The sender's detailed states (docs/relayer.md). */
export const RELAY_TX_STATES = ['queued', 'submitted', 'mined', 'confirmed', 'failed'] as const;

/** `POST /relay` 200 body (spec 2.6), plus `id` for `GET /relayer/transactions/:id`. */
export const relayResponseSchema = z
  .object({
    success: z.literal(true),
    id: z.string().describe('Stable id of the relayed transaction; the hash may change with a gas bump'),
    transactionHash: z.string().regex(TX_HASH_PATTERN),
    gasUsed: z.string().nullable().describe('Decimal; null while pending'),
    effectiveGasPrice: z.string().nullable().describe('Wei, decimal; null while pending'),
    blockNumber: z.number().int().nullable(),
    from: z.string().describe('The relayer wallet that executed'),
    to: z.string().describe('The contract called (PointsSale when a claim is rewritten to claimPerkWithPermit)'),
    status: z.enum(RELAY_STATUSES),
    explorerUrl: z.string(),
    functionName: z.string().describe('The function that was sent, e.g. claimPerkWithPermit'),
    permitTransactionHash: z
      .string()
      .regex(TX_HASH_PATTERN)
      .optional()
      .describe('When the permit went first in a transaction of its own'),
  })
  .meta({ id: 'RelayResponse' });
export type RelayResponse = z.infer<typeof relayResponseSchema>;

/** `GET /relayer/transactions/:id` path. */
export const relayTransactionParamsSchema = z.object({
  id: z.string().regex(/^[0-9a-fA-F-]{1,64}$/, 'must be the id returned by POST /relay'),
});

/** `GET /relayer/transactions/:id` body. */
export const relayTransactionSchema = z
  .object({
    success: z.literal(true),
    id: z.string(),
    status: z.enum(RELAY_STATUSES),
    state: z.enum(RELAY_TX_STATES).describe('Detailed state of the sender'),
    transactionHash: z.string().nullable().describe('Current hash; null while queued'),
    hashes: z.array(z.string()).describe('Every hash the transaction was signed with, oldest first'),
    from: z.string(),
    to: z.string(),
    gasUsed: z.string().nullable(),
    effectiveGasPrice: z.string().nullable(),
    blockNumber: z.number().int().nullable(),
    error: z.string().nullable(),
    explorerUrl: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'RelayTransaction' });
export type RelayTransactionView = z.infer<typeof relayTransactionSchema>;
