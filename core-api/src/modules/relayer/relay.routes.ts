import {
  RELAY_BODY_LIMIT_BYTES,
  relayRequestSchema,
  relayResponseSchema,
  relayTransactionParamsSchema,
  relayTransactionSchema,
} from '@pts/shared';
import type { Response } from 'express';
import type { RateLimit } from '../../http/rate-limit.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { limitIp } from './ip-limit.ts';
import { parseRelayBody, type QuotaState, quotaOf, type RelayService } from './relay.service.ts';

/** What the relay routes use: the relay service (relay.service.ts, built once by compose.ts). */
export type RelayRouterDeps = {
  relay: RelayService;
};

function setQuotaHeaders(res: Response, quota: QuotaState): void {
  res.setHeader('X-RateLimit-Limit', String(quota.limit));
  res.setHeader('X-RateLimit-Remaining', String(quota.remaining));
  res.setHeader('X-RateLimit-Reset', String(quota.reset));
}

/**
 * The gasless relay (spec 4.9), relative to where it is mounted (`/relayer`, and the root when the relayer
 * role runs alone): `POST /relay` and `GET /transactions/:id`. Both take the user's bearer access token.
 * 100 requests per minute per IP (in-process); 35 relays per hour per user address (in the database).
 */
export function relayRoutes(deps: RelayRouterDeps, limits: { ipLimit: RateLimit }): Route[] {
  const before = [limitIp(limits.ipLimit)];
  return [
    defineRoute({
      method: 'post',
      path: '/relay',
      summary: "Relay a user's call gaslessly (perk claims with an EIP-2612 permit)",
      description:
        'Checks, in order: required fields (400 MISSING_FIELDS), formats (400 INVALID_FORMAT), the bearer token ' +
        "(401), `userAddress` is the user's wallet (403), contract whitelist (403 CONTRACT_NOT_WHITELISTED), " +
        'relayable function and user-bound arguments (403 VALIDATION_FAILED with `allowedFunctions`), the permit ' +
        'off-chain (403), gas price cap (503), 35 relays per hour per user (429), the per-user claim limit (409), ' +
        'then simulates (403 on a revert, nothing sent), sends and waits up to PTS_RELAYER_WAIT_MS. A claimPerk ' +
        'with `metadata.permit` for exactly the price is sent as claimPerkWithPermit (one atomic transaction). ' +
        'Mined with a revert: 500 TRANSACTION_FAILED. See docs/relayer.md.',
      tags: ['relayer'],
      security: ['bearer'],
      before,
      // The relay's own parser answers MISSING_FIELDS / INVALID_FORMAT (the seed system's codes).
      request: { body: relayRequestSchema, bodyLimitBytes: RELAY_BODY_LIMIT_BYTES, validateBody: false },
      responses: {
        200: { description: 'Sent; `status` pending until confirmed', schema: relayResponseSchema },
        400: failure('MISSING_FIELDS (`details.missing`) or INVALID_FORMAT (`details.field`, `details.errors`)'),
        401: failure('UNAUTHORIZED: missing, malformed, forged or expired access token'),
        403: failure('CONTRACT_NOT_WHITELISTED, or VALIDATION_FAILED (wallet, function, permit, simulation)'),
        409: failure('CLAIM_LIMIT_REACHED: `details.collectionId`, `currentClaims`, `maxPerUser`'),
        413: failure('Body over 16 KB'),
        415: failure('Not application/json'),
        429: failure('RATE_LIMIT_EXCEEDED: `retryAfter`, `details.reason` rate_limit_exceeded, X-RateLimit-* headers'),
        500: failure('TRANSACTION_FAILED: mined with a revert (`details.id`, `details.transactionHash`)'),
        503: failure('Gas price above the cap (`details.reason` gas_price_above_cap); retry later'),
      },
      handle: async ({ req, res }) => {
        const request = parseRelayBody(req.body);
        const user = await deps.relay.authenticate(req.get('authorization'));
        try {
          const { response, quota } = await deps.relay.relay(user, request);
          setQuotaHeaders(res, quota);
          return response;
        } catch (error) {
          const quota = quotaOf(error);
          if (quota) setQuotaHeaders(res, quota);
          throw error;
        }
      },
    }),
    defineRoute({
      method: 'get',
      path: '/transactions/:id',
      summary: 'State of one of your relayed transactions',
      description: 'Only the transactions relayed for one of your wallets; any other id answers 404.',
      tags: ['relayer'],
      security: ['bearer'],
      before,
      request: { params: relayTransactionParamsSchema },
      responses: {
        200: { description: 'Current hash, every hash, status and receipt data', schema: relayTransactionSchema },
        400: failure('Malformed transaction id'),
        401: failure('UNAUTHORIZED'),
        404: failure('No such transaction of yours'),
        429: failure('More than PTS_RELAYER_IP_PER_MINUTE requests per minute from this IP'),
      },
      handle: async ({ params: { id }, req }) => {
        const user = await deps.relay.authenticate(req.get('authorization'));
        return deps.relay.getTransaction(user, id);
      },
    }),
  ];
}
