import {
  claimDropRequestSchema,
  claimDropResponseSchema,
  createDropRequestSchema,
  createDropResponseSchema,
  errorEnvelopeSchema,
} from '@pts/shared';
import { type Request, type Response, Router } from 'express';
import { type BrandSignatureVerifier, requireBrandSignature } from '../../http/brand-signature.ts';
import { jsonBody, requireJson } from '../../http/json-body.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { parseInput } from '../../http/validate.ts';
import type { ApiDocs } from '../../observability/openapi.ts';
import { claimDrop, createDrop, type DropDeps } from './drops.service.ts';

export interface DropsRouterDeps extends DropDeps {
  verifyBrandSignature: BrandSignatureVerifier;
  brandLimit?: RateLimit | undefined;
}

const BODY_LIMIT_BYTES = 8 * 1024;

/** `POST /drops/create` and `POST /drops/claim` under `/services`, both brand-signed (docs/compatibility.md). */
export function createDropsRouter(deps: DropsRouterDeps): Router {
  const router = Router();
  const requireSigned = async (req: Request, res: Response, brandId: string, what: string) => {
    await requireBrandSignature(deps.verifyBrandSignature, req, brandId, what);
    await deps.brandLimit?.consume(res, brandId);
  };

  router.post('/drops/create', requireJson, jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    const input = parseInput(createDropRequestSchema, req.body);
    await requireSigned(req, res, input.brandId, 'Creating a drop');
    res.status(201).json({ success: true, drop: await createDrop(deps, input) });
  });

  router.post('/drops/claim', requireJson, jsonBody(BODY_LIMIT_BYTES), async (req, res) => {
    const input = parseInput(claimDropRequestSchema, req.body);
    await requireSigned(req, res, input.brandId, 'Claiming a drop');
    res.json(await claimDrop(deps, input));
  });
  return router;
}

/** OpenAPI entries of the drop routes. */
export function registerDropDocs(docs: ApiDocs): void {
  const failure = (description: string) => ({ description, schema: errorEnvelopeSchema });
  docs.register({
    method: 'post',
    path: '/services/drops/create',
    tags: ['engagement'],
    summary: 'Create a drop: a time-boxed claimable amount with a supply and a per-user limit',
    description: 'Also creates the brand’s `drop_claim` rule (reward 0, no cooldown, unlimited) when it has none.',
    security: ['brandSignature'],
    request: { body: createDropRequestSchema },
    responses: {
      201: { description: 'Created', schema: createDropResponseSchema },
      400: failure('Invalid body or window'),
      401: failure('Missing, wrong or replayed brand signature'),
      404: failure('Unknown brand'),
    },
  });
  docs.register({
    method: 'post',
    path: '/services/drops/claim',
    tags: ['engagement'],
    summary: 'Claim a drop: once per user (or its per-user limit), within supply, minted through the event path',
    security: ['brandSignature'],
    request: { body: claimDropRequestSchema },
    responses: {
      200: { description: 'Claimed', schema: claimDropResponseSchema },
      400: failure('`CLAIM_FAILED` with details.reason not_started, ended or already_claimed'),
      401: failure('Missing, wrong or replayed brand signature'),
      404: failure('Unknown drop'),
      409: failure('`SOLD_OUT`'),
    },
  });
}
