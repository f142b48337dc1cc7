import type { Logger } from 'pino';
import type { Address } from 'viem';
import type { ChainPublicClient } from '../../chain/deploy.ts';
import type { RelayerSender } from '../../chain/relayer.types.ts';
import type { BrandSignatureVerifier } from '../../http/brand-signature.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import type { Route } from '../../http/route-table.ts';
import { perkChargeRoutes } from './perk-charges.routes.ts';
import { relayRoutes } from './relay.routes.ts';
import type { RelayRecords, RelayService } from './relay.service.ts';

/** What the relayer host's routes use: the relay services (compose.ts builds them) and the chain ports. */
export interface RelayerRouterDeps {
  relay: RelayService;
  relayRecords: RelayRecords;
  logger: Logger;
  relayer: RelayerSender;
  publicClient: ChainPublicClient;
  /** Undefined when this process knows no PerkNFT address (PTS_CHAIN=rpc without PTS_PERK_NFT_ADDRESS). */
  perkNftAddress: Address | undefined;
  /** How long a perk redemption waits for its receipt (PTS_RELAYER_WAIT_MS). */
  waitMs: number;
}

/**
 * Everything the relayer host serves under `/relayer` (and at the root of a relayer-only process): the
 * brand-signed perk charge endpoints (spec 4.10) and the user relay endpoint (spec 4.9).
 */
export function relayerRoutes(
  deps: RelayerRouterDeps,
  services: {
    verifyBrandSignature: BrandSignatureVerifier;
    /** Per IP on `/relay` and on the perk charge endpoints (compose.ts builds them, shared by the replicas). */
    limits: { relayIp: RateLimit; perkChargeIp: RateLimit };
  },
): Route[] {
  return [
    ...perkChargeRoutes({
      relayRecords: deps.relayRecords,
      logger: deps.logger,
      relayer: deps.relayer,
      publicClient: deps.publicClient,
      perkNftAddress: deps.perkNftAddress,
      verifyBrandSignature: services.verifyBrandSignature,
      waitMs: deps.waitMs,
      ipLimit: services.limits.perkChargeIp,
    }),
    ...relayRoutes({ relay: deps.relay }, { ipLimit: services.limits.relayIp }),
  ];
}
