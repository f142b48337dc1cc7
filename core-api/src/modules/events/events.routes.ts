import {
  AppError,
  type BulkEventFailure,
  bulkEventsRequestSchema,
  bulkEventsResponseSchema,
  type Clock,
  type EventConfigResponse,
  type EventRequest,
  type EventResponse,
  eventConfigQuerySchema,
  eventConfigResponseSchema,
  eventRequestSchema,
  eventResponseSchema,
  isAppError,
} from '@pts/shared';
import type { Request, RequestHandler, Response } from 'express';
import type { BrandSignatureVerifier, SignatureClaim } from '../../http/brand-signature.ts';
import { hasBrandSignature, isReplayedSignature, markSignatureOwner } from '../../http/brand-signature.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { describeIssues } from '../../http/validate.ts';
import type { EventCandidate } from './event-batcher.ts';
import { toEventConfigItem } from './event-config.ts';
import { bulkEventFailure, type EventService } from './events.service.ts';

export interface EventRoutesDeps {
  /** The event pipeline (its brand cache answers event-config). */
  events: EventService;
  verifyBrandSignature: BrandSignatureVerifier;
  brandLimit: RateLimit;
  bodyLimitBytes: number;
  bulkBodyLimitBytes: number;
  eventConfigCacheSeconds: number;
}

/** The event-config cache: answers for 5 minutes (spec 4.3) unless a rule of the brand changes. */
export function createEventConfigCache(ttlSeconds: number, clock: Clock) {
  const entries = new Map<string, { body: EventConfigResponse; at: number }>();
  return {
    get(brandId: string): EventConfigResponse | undefined {
      const entry = entries.get(brandId);
      const age = entry ? clock.now().getTime() - entry.at : -1;
      return entry && age >= 0 && age < ttlSeconds * 1000 ? entry.body : undefined;
    },
    set(brandId: string, body: EventConfigResponse) {
      entries.set(brandId, { body, at: clock.now().getTime() });
    },
    invalidate(brandId?: string) {
      if (brandId) entries.delete(brandId);
      else entries.clear();
    },
  };
}
export type EventConfigCache = ReturnType<typeof createEventConfigCache>;

/**
 * Unsigned traffic is limited per IP; signed server-to-server traffic is limited per brand once verified. The
 * app mounts this ahead of the event routes, so it covers every `/pts-api` route mounted after them too.
 */
export function limitUnsignedByIp(ipLimit: RateLimit): RequestHandler {
  return async (req, res, next) => {
    try {
      if (!hasBrandSignature(req)) await ipLimit.consume(res, req.ip ?? 'unknown');
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** A brand signature, or (manual-event, bulk-events) a request from one of the brand's authorized domains. */
const signed: ['brandSignature'] = ['brandSignature'];

/**
 * Event handler routes (spec 4.1–4.3), mounted under `/pts-api`: `POST /manual-event`, `POST /bulk-events`,
 * `GET /event-config`. Bodies are validated before the brand signature is checked (the brand id is in them).
 */
export function eventRoutes(deps: EventRoutesDeps, eventConfigCache: EventConfigCache): Route[] {
  /**
   * Verifies a signature for the brand and takes `cost` from the brand's limit. `record: false` leaves
   * recording the signature as used to the event's own transaction.
   */
  const authorizeBrand = async (
    req: Request,
    res: Response,
    brandId: string,
    cost: number,
    record: boolean,
  ): Promise<SignatureClaim | undefined> => {
    const claim = await deps.verifyBrandSignature(req, brandId, { record });
    await deps.brandLimit.consume(res, brandId, cost, { headers: claim !== undefined });
    return claim;
  };

  return [
    defineRoute({
      method: 'post',
      path: '/manual-event',
      summary: 'Record a customer event and mint its reward',
      description:
        'Applies the brand rule: domain authorization (or a brand signature), automation, channel, duplicate window, cooldown, per-user and global max claims. Brand-signed requests may set `metadata.source` to a privileged origin or `metadata.skip_cooldown`. An optional `externalId` (1 to 128 characters: a post id, an order id) makes the event idempotent: a repeat of the same brand, eventType and externalId is never rewarded again. The same sender (the brand signature) repeating it for the same user gets 200 with the first event and `duplicate: true`; anyone else (an unsigned request, another user) gets 409 `duplicate` naming nothing of the first event. Such events skip the 60 s duplicate window; cooldown and limits still apply.',
      tags: ['events'],
      security: signed,
      request: { body: eventRequestSchema, bodyLimitBytes: deps.bodyLimitBytes },
      responses: {
        200: {
          description: 'Rewarded (or, with `duplicate: true`, already rewarded for this externalId)',
          schema: eventResponseSchema,
        },
        400: failure('Validation failed or unknown event type'),
        401: failure('Bad brand signature'),
        403: failure('Domain not authorized, automation disabled or channel not allowed'),
        404: failure('Unknown brand'),
        409: failure('Duplicate event inside the duplicate window, or an externalId another sender or user used'),
        413: failure(`Body over ${deps.bodyLimitBytes} bytes`),
        415: failure('Body not sent as application/json'),
        429: failure('Cooldown, max claims, max total claims or rate limit'),
      },
      handle: async ({ body: input, req, res }) => {
        const signature = await authorizeBrand(req, res, input.brandId, 1, false);
        let response: EventResponse;
        try {
          response = await deps.events.recordEvent(input, {
            signed: signature !== undefined,
            signature,
            origin: req.headers.origin,
          });
        } catch (error) {
          // A refused event (cooldown, limits) was judged in a transaction that recorded its signature too: its
          // answer is the one identical retries get. A replay is answered by the error handler instead.
          if (signature && !isReplayedSignature(error)) markSignatureOwner(req, signature);
          throw error;
        }
        // The event's transaction recorded the signature: this request's answer is the one retries get.
        if (signature) markSignatureOwner(req, signature);
        return response;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/bulk-events',
      summary: 'Record 1 to 100 events in one request',
      description:
        'Each item is a manual-event body (its `externalId` included); items are judged in order, so a repeated externalId inside one request is paid once and its repeats answer `duplicate: true`.',
      tags: ['events'],
      security: signed,
      request: { body: bulkEventsRequestSchema, bodyLimitBytes: deps.bulkBodyLimitBytes },
      responses: {
        200: { description: 'Per-event results, in request order', schema: bulkEventsResponseSchema },
        400: failure('Envelope invalid'),
        401: failure('Bad brand signature'),
        413: failure(`Body over ${deps.bulkBodyLimitBytes} bytes`),
        415: failure('Body not sent as application/json'),
        429: failure('Rate limit'),
      },
      handle: async ({ body: { events }, req, res }) => {
        const parsed = events.map((item, index) => parseBulkItem(item, index, deps.bodyLimitBytes));
        const valid = parsed.filter((item): item is { index: number; input: EventRequest } => 'input' in item);
        // A signature can only be for one brand: the first valid item's brand is the signing brand. It is
        // recorded here, once for the whole request, since its items may land in different batches.
        const signingBrand = hasBrandSignature(req) ? valid[0]?.input.brandId : undefined;
        let signed = false;
        if (signingBrand) signed = (await authorizeBrand(req, res, signingBrand, valid.length, true)) !== undefined;
        else {
          const costs = new Map<string, number>();
          for (const { input } of valid) costs.set(input.brandId, (costs.get(input.brandId) ?? 0) + 1);
          for (const [brandId, cost] of costs) await deps.brandLimit.consume(res, brandId, cost, { headers: false });
        }

        // Items are prepared in order, then queued together: the batcher judges them in that order (identical
        // items see each other) and usually in one transaction; their mints are awaited together so the
        // minter's group commit carries them in as few transactions as possible.
        const prepared: (EventCandidate | BulkEventFailure)[] = [];
        for (const item of parsed) {
          if (!('input' in item)) {
            prepared.push(item);
            continue;
          }
          if (signingBrand && item.input.brandId !== signingBrand) {
            prepared.push(
              bulkEventFailure(
                item.index,
                new AppError(
                  'INVALID_SIGNATURE',
                  `This request is signed for brand ${signingBrand}; send other brands separately`,
                ),
              ),
            );
            continue;
          }
          try {
            prepared.push(await deps.events.prepareEvent(item.input, { signed, origin: req.headers.origin }));
          } catch (error) {
            if (!isAppError(error)) throw error;
            prepared.push(bulkEventFailure(item.index, error));
          }
        }
        return deps.events.settleBulkEvents(prepared);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/event-config',
      summary: "A brand's active event configuration (cached 5 minutes)",
      tags: ['events'],
      request: { query: eventConfigQuerySchema },
      responses: {
        200: { description: 'Active rules', schema: eventConfigResponseSchema },
        400: failure('brandId missing or malformed'),
        404: failure('Unknown brand'),
      },
      handle: async ({ query: { brandId }, res }) => {
        let body = eventConfigCache.get(brandId);
        if (!body) {
          const cached = await deps.events.brands.get(brandId);
          if (!cached) {
            throw new AppError('BRAND_NOT_FOUND', `Brand ${brandId} is not registered; check brandId`, {
              field: 'brandId',
              value: brandId,
            });
          }
          const events = [...cached.rulesByType.values()]
            .filter((rule) => rule.active)
            .sort((a, b) => a.event_type.localeCompare(b.event_type))
            .map(toEventConfigItem);
          body = { success: true, brandId, events, count: events.length };
          eventConfigCache.set(brandId, body);
        }
        res.setHeader('Cache-Control', `public, max-age=${deps.eventConfigCacheSeconds}`);
        return body;
      },
    }),
  ];
}

function parseBulkItem(
  item: unknown,
  index: number,
  itemLimitBytes: number,
): { index: number; input: EventRequest } | BulkEventFailure {
  const size = Buffer.byteLength(JSON.stringify(item) ?? '', 'utf8');
  if (size > itemLimitBytes) {
    return bulkEventFailure(
      index,
      new AppError('PAYLOAD_TOO_LARGE', `Event is ${size} bytes; each event may be at most ${itemLimitBytes}`),
    );
  }
  const result = eventRequestSchema.safeParse(item);
  if (result.success) return { index, input: result.data };
  const errors = describeIssues(result.error);
  return bulkEventFailure(index, new AppError('VALIDATION_ERROR', `Invalid event: ${errors.join('; ')}`, { errors }));
}
