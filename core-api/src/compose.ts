import { buildSdk } from '@pts/sdk/build';
import type { AppDeps } from './deps.ts';
import { type BrandSignatureVerifier, createBrandSignatureVerifier } from './http/brand-signature.ts';
import { createCors } from './http/cors.ts';
import { createRateLimit, type RateLimit } from './http/rate-limit.ts';
import { createSignedReplies, type SignedReplies } from './http/signed-replies.ts';
import type { ChangeNotifier } from './modules/brands/brand-changes.ts';
import { listAllBrandDomains } from './modules/brands/brands.repository.ts';
import { type BrandCache, createBrandCache } from './modules/events/brand-cache.ts';
import { createConfiguredEventBatcher } from './modules/events/event-batcher.ts';
import { createEventConfigCache, type EventConfigCache } from './modules/events/events.routes.ts';
import type { EventDeps } from './modules/events/events.service.ts';
import { createSdkScriptSource, type SdkScript } from './modules/sdk/sdk-script.ts';

/**
 * The services a process shares between its routers and jobs, each built once (CONVENTIONS habit 5): two
 * copies of a cache or a verifier means one of them goes stale — this happened when check-in had a brand
 * cache of its own that no rule change reached.
 */
export interface AppServices {
  /** Brand changes (admin writes) → every cache below. */
  changes: ChangeNotifier;
  /** Brands, their rules and decrypted security keys, for every path: events, check-in, milestones, signatures. */
  brands: BrandCache;
  /** `GET /pts-api/event-config` answers (5 minutes unless a rule changes). */
  eventConfigCache: EventConfigCache;
  /** CORS over the brands' authorized domains. */
  cors: ReturnType<typeof createCors>;
  /** The event pipeline: ONE batcher (and so one wallet reserve) for every path that rewards. */
  events: EventDeps;
  /** Brand request signatures, with one key lookup: the brand cache. */
  verifyBrandSignature: BrandSignatureVerifier;
  /** Identical signed requests: the first one's answer, replayed (docs/api/events.md, "Retries"). */
  signedReplies: SignedReplies;
  /** Unsigned traffic per IP, and signed traffic per brand, on the event handler host (/pts-api, /services). */
  limits: { ip: RateLimit; brand: RateLimit };
  /** The browser SDK served at `/sdk.js`, built once per process (docs/sdk.md). */
  sdk: { load(): Promise<SdkScript> };
}

/** Builds the shared services from the process's ports and wires every cache to the change notifier. */
export function composeServices(deps: AppDeps, changes: ChangeNotifier): AppServices {
  const { config, db, clock, logger, metrics } = deps;
  const brands = createBrandCache({
    db,
    secrets: deps.secrets,
    clock,
    ttlMs: config.PTS_RULE_CACHE_SECONDS * 1000,
  });
  const eventConfigCache = createEventConfigCache(config.PTS_EVENT_CONFIG_CACHE_SECONDS, clock);
  const cors = createCors({
    serviceDomains: config.PTS_SERVICE_DOMAINS,
    loadBrandDomains: () => listAllBrandDomains(db),
    now: () => clock.now().getTime(),
  });
  changes.subscribe((change) => {
    brands.invalidate(change.brandId);
    eventConfigCache.invalidate(change.brandId);
    cors.refresh();
  });
  const events: EventDeps = {
    db,
    clock,
    logger,
    metrics,
    minter: deps.minter,
    brands,
    batcher: createConfiguredEventBatcher(
      { db, clock, logger, metrics, wallets: deps.wallets, minter: deps.minter },
      config,
    ),
    settings: { mintWaitMs: config.PTS_MINT_WAIT_MS },
  };
  const verifyBrandSignature = createBrandSignatureVerifier({
    db,
    clock,
    toleranceSeconds: config.PTS_SIGNATURE_TOLERANCE_SECONDS,
    securityKeyFor: async (brandId) => (await brands.get(brandId.toLowerCase()))?.securityKey,
  });
  return {
    changes,
    brands,
    eventConfigCache,
    cors,
    events,
    verifyBrandSignature,
    // A retry waits at most as long as the first request may wait for its mint, and a little more.
    signedReplies: createSignedReplies({ db, logger, waitMs: config.PTS_MINT_WAIT_MS + 5_000 }),
    sdk: createSdkScriptSource(buildSdk),
    limits: {
      ip: createRateLimit({ name: 'ip', points: config.PTS_RATE_LIMIT_IP_PER_MINUTE, durationSeconds: 60 }),
      brand: createRateLimit({ name: 'brand', points: config.PTS_RATE_LIMIT_BRAND_PER_MINUTE, durationSeconds: 60 }),
    },
  };
}
