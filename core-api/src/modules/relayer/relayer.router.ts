import { Router } from 'express';
import type { Address } from 'viem';
import type { BrandSignatureVerifier } from '../../http/brand-signature.ts';
import { createRateLimit } from '../../http/rate-limit.ts';
import { createPerkChargesRouter } from './perk-charges.routes.ts';
import { createRelayRouter, type RelayRouterDeps } from './relay.routes.ts';

/**
 * Everything the relayer host serves under `/relayer` (and at the root of a relayer-only process): the
 * brand-signed perk charge endpoints (spec 4.10) and the user relay endpoint (spec 4.9).
 */
export function createRelayerRouter(
  deps: RelayRouterDeps,
  services: { verifyBrandSignature: BrandSignatureVerifier },
): Router {
  const router = Router();
  const { verifyBrandSignature } = services;
  router.use(
    createPerkChargesRouter({
      db: deps.db,
      logger: deps.logger,
      relayer: deps.relayer,
      publicClient: deps.publicClient,
      chainId: deps.chain.chainId,
      perkNftAddress: (deps.chain.contracts.perkNft ?? deps.config.PTS_PERK_NFT_ADDRESS) as Address | undefined,
      verifyBrandSignature,
      waitMs: deps.config.PTS_RELAYER_WAIT_MS,
      ipLimit: createRateLimit({ name: 'ip', points: deps.config.PTS_RELAYER_IP_PER_MINUTE, durationSeconds: 60 }),
    }),
  );
  router.use(createRelayRouter(deps));
  return router;
}
