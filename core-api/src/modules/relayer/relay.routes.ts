import type { Clock } from '@pts/shared';
import {
  errorEnvelopeSchema,
  RELAY_BODY_LIMIT_BYTES,
  relayRequestSchema,
  relayResponseSchema,
  relayTransactionParamsSchema,
  relayTransactionSchema,
} from '@pts/shared';
import { type NextFunction, type Request, type Response, Router } from 'express';
import type { Logger } from 'pino';
import { parseGwei } from 'viem';
import type { ChainInfo } from '../../chain/chain-info.ts';
import { relayContractsOf } from '../../chain/contract-addresses.ts';
import type { ChainPublicClient } from '../../chain/deploy.ts';
import type { RelayerSender } from '../../chain/relayer.types.ts';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { jsonBody, requireJson } from '../../http/json-body.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { parseInput } from '../../http/validate.ts';
import type { IdentityProvider } from '../../modules/identity/identity-provider.ts';
import type { ApiDocs } from '../../observability/openapi.ts';
import type { ConstraintChecker } from '../perks/constraints/constraint-checker.ts';
import {
  authenticate,
  createRelayChainReader,
  getRelayTransaction,
  parseRelayBody,
  type QuotaState,
  quotaOf,
  type RelayServiceDeps,
  relay,
} from './relay.service.ts';

/** What the relay routes use from the app. */
export type RelayRouterDeps = {
  db: Database;
  clock: Clock;
  logger: Logger;
  identity: IdentityProvider;
  chain: ChainInfo;
  config: Config;
  relayer: RelayerSender;
  publicClient: ChainPublicClient;
  constraints?: ConstraintChecker | undefined;
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
export function createRelayRouter(deps: RelayRouterDeps, limits: { ipLimit: RateLimit }): Router {
  const { config } = deps;
  const contracts = relayContractsOf(deps);
  const service: RelayServiceDeps = {
    db: deps.db,
    clock: deps.clock,
    logger: deps.logger,
    relayer: deps.relayer,
    identity: deps.identity,
    chain: createRelayChainReader(deps.publicClient, contracts),
    contracts,
    constraints: deps.constraints,
    settings: {
      userPerHour: config.PTS_RELAYER_USER_PER_HOUR,
      waitMs: config.PTS_RELAYER_WAIT_MS,
      maxGasLimit: config.PTS_RELAYER_MAX_GAS_LIMIT,
      maxGasPriceWei: parseGwei(String(config.PTS_RELAYER_MAX_GAS_PRICE_GWEI)),
      explorerUrl: config.PTS_EXPLORER_URL,
    },
  };
  const { ipLimit } = limits;
  const limitIp = async (req: Request, res: Response, next: NextFunction) => {
    try {
      // Headers only when refused: a successful relay answers with the per-user quota's headers.
      await ipLimit.consume(res, req.ip ?? 'unknown', 1, { headers: false });
      next();
    } catch (error) {
      next(error);
    }
  };

  const router = Router();
  router.post('/relay', limitIp, requireJson, jsonBody(RELAY_BODY_LIMIT_BYTES), async (req, res) => {
    const request = parseRelayBody(req.body);
    const user = await authenticate(deps.identity, req.get('authorization'));
    try {
      const { response, quota } = await relay(service, user, request);
      setQuotaHeaders(res, quota);
      res.json(response);
    } catch (error) {
      const quota = quotaOf(error);
      if (quota) setQuotaHeaders(res, quota);
      throw error;
    }
  });

  router.get('/transactions/:id', limitIp, async (req, res) => {
    const { id } = parseInput(relayTransactionParamsSchema, req.params, 'path');
    const user = await authenticate(deps.identity, req.get('authorization'));
    res.json(await getRelayTransaction(service, user, id));
  });
  return router;
}

/** Documents the relay routes (pass the prefix they are mounted under). */
export function registerRelayerDocs(docs: ApiDocs, prefix = '/relayer'): void {
  const error = (description: string) => ({ description, schema: errorEnvelopeSchema });
  docs.register({
    method: 'post',
    path: `${prefix}/relay`,
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
    request: { body: relayRequestSchema },
    responses: {
      200: { description: 'Sent; `status` pending until confirmed', schema: relayResponseSchema },
      400: error('MISSING_FIELDS (`details.missing`) or INVALID_FORMAT (`details.field`, `details.errors`)'),
      401: error('UNAUTHORIZED: missing, malformed, forged or expired access token'),
      403: error('CONTRACT_NOT_WHITELISTED, or VALIDATION_FAILED (wallet, function, permit, simulation)'),
      409: error('CLAIM_LIMIT_REACHED: `details.collectionId`, `currentClaims`, `maxPerUser`'),
      413: error('Body over 16 KB'),
      429: error('RATE_LIMIT_EXCEEDED: `retryAfter`, `details.reason` rate_limit_exceeded, X-RateLimit-* headers'),
      500: error('TRANSACTION_FAILED: mined with a revert (`details.id`, `details.transactionHash`)'),
      503: error('Gas price above the cap (`details.reason` gas_price_above_cap); retry later'),
    },
    security: ['bearer'],
  });
  docs.register({
    method: 'get',
    path: `${prefix}/transactions/:id`,
    summary: 'State of one of your relayed transactions',
    description: 'Only the transactions relayed for one of your wallets; any other id answers 404.',
    tags: ['relayer'],
    request: { params: relayTransactionParamsSchema },
    responses: {
      200: { description: 'Current hash, every hash, status and receipt data', schema: relayTransactionSchema },
      401: error('UNAUTHORIZED'),
      404: error('No such transaction of yours'),
    },
    security: ['bearer'],
  });
}
