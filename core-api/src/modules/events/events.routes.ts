import {
  AppError,
  type BulkEventFailure,
  bulkEventsRequestSchema,
  type Clock,
  type EventConfigResponse,
  type EventRequest,
  type EventResponse,
  eventConfigQuerySchema,
  eventRequestSchema,
  isAppError,
} from '@pts/shared';
import type express from 'express';
import { type Request, Router } from 'express';
import type { BrandSignatureVerifier, SignatureClaim } from '../../http/brand-signature.ts';
import { hasBrandSignature, isReplayedSignature, markSignatureOwner } from '../../http/brand-signature.ts';
import { jsonBody, requireJson } from '../../http/json-body.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { describeIssues, parseInput } from '../../http/validate.ts';
import type { EventCandidate } from './event-batcher.ts';
import { toEventConfigItem } from './event-config.ts';
import { bulkEventFailure, type EventDeps, prepareEvent, recordEvent, settleBulkEvents } from './events.service.ts';

export interface EventRoutesDeps extends EventDeps {
  verifyBrandSignature: BrandSignatureVerifier;
  ipLimit: RateLimit;
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

/** Event handler routes (spec 4.1–4.3), mounted under `/pts-api`. */
export function createEventsRouter(deps: EventRoutesDeps, eventConfigCache: EventConfigCache): Router {
  const router = Router();

  // Unsigned traffic is limited per IP; signed server-to-server traffic is limited per brand once verified.
  router.use(async (req, res, next) => {
    try {
      if (!hasBrandSignature(req)) await deps.ipLimit.consume(res, req.ip ?? 'unknown');
      next();
    } catch (error) {
      next(error);
    }
  });

  /**
   * Verifies a signature for the brand and takes `cost` from the brand's limit. `record: false` leaves
   * recording the signature as used to the event's own transaction.
   */
  const authorizeBrand = async (
    req: Request,
    res: express.Response,
    brandId: string,
    cost: number,
    record: boolean,
  ): Promise<SignatureClaim | undefined> => {
    const claim = await deps.verifyBrandSignature(req, brandId, { record });
    await deps.brandLimit.consume(res, brandId, cost, { headers: claim !== undefined });
    return claim;
  };

  router.post('/manual-event', requireJson, jsonBody(deps.bodyLimitBytes), async (req, res) => {
    const input = parseInput(eventRequestSchema, req.body);
    const signature = await authorizeBrand(req, res, input.brandId, 1, false);
    let response: EventResponse;
    try {
      response = await recordEvent(deps, input, {
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
    res.json(response);
  });

  router.post('/bulk-events', requireJson, jsonBody(deps.bulkBodyLimitBytes), async (req, res) => {
    const { events } = parseInput(bulkEventsRequestSchema, req.body);
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
        prepared.push(await prepareEvent(deps, item.input, { signed, origin: req.headers.origin }));
      } catch (error) {
        if (!isAppError(error)) throw error;
        prepared.push(bulkEventFailure(item.index, error));
      }
    }
    res.json(await settleBulkEvents(deps, prepared));
  });

  router.get('/event-config', async (req, res) => {
    const { brandId } = parseInput(eventConfigQuerySchema, req.query, 'query');
    let body = eventConfigCache.get(brandId);
    if (!body) {
      const cached = await deps.brands.get(brandId);
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
    res.json(body);
  });

  return router;
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
