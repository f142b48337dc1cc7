import type { Address } from 'viem';
import type { BrandSignatureVerifier } from '../../http/brand-signature.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import type { Route } from '../../http/route-table.ts';
import { perkChargeRoutes } from './perk-charges.routes.ts';
import { type RelayRouterDeps, relayRoutes } from './relay.routes.ts';

/**
 * Everything the relayer host serves under `/relayer` (and at the root of a relayer-only process): the
 * brand-signed perk charge endpoints (spec 4.10) and the user relay endpoint (spec 4.9).
 */
export function relayerRoutes(
  deps: RelayRouterDeps,
  services: {
    verifyBrandSignature: BrandSignatureVerifier;
    /** Per IP on `/relay` and on the perk charge endpoints (compose.ts builds them, shared by the replicas). */
    limits: { relayIp: RateLimit; perkChargeIp: RateLimit };
  },
): Route[] {
  return [
    ...perkChargeRoutes({
      db: deps.db,
      logger: deps.logger,
      relayer: deps.relayer,
      publicClient: deps.publicClient,
      chainId: deps.chain.chainId,
      perkNftAddress: (deps.chain.contracts.perkNft ?? deps.config.PTS_PERK_NFT_ADDRESS) as Address | undefined,
      verifyBrandSignature: services.verifyBrandSignature,
      waitMs: deps.config.PTS_RELAYER_WAIT_MS,
      ipLimit: services.limits.perkChargeIp,
    }),
    ...relayRoutes(deps, { ipLimit: services.limits.relayIp }),
  ];
}
