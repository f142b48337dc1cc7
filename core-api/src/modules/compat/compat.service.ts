import type {
  Clock,
  logActivityRequestSchema,
  processIntegrationRequestSchema,
  seedEventEligibilityRequestSchema,
  seedLeaderboardStatsRequestSchema,
} from '@pts/shared';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Database } from '../../db/database.ts';
import type { BalanceService } from '../balances/balances.service.ts';
import { findDropBrand } from '../drops/drops.service.ts';
import type { BrandCache } from '../events/brand-cache.ts';
import type { EventService } from '../events/events.service.ts';
import { findBrandPerkIdByUuid } from '../perks/perks.repository.ts';
import { findWalletOf } from '../users/users.repository.ts';
import { checkEventEligibility, recordReportedStats } from './seed-client.service.ts';
import {
  calculateReward,
  eventTypeForReference,
  logActivity,
  processIntegration,
  readUserStats,
} from './seed-compat.service.ts';

/**
 * The seed system's clients' mapping onto pts (docs/compatibility.md), for the seed adapters and endpoints
 * of `/pts-api` and `/services`: the lookups an adapter needs to map a seed request, and the seed's own
 * endpoints, each answered by the module that owns the decision.
 */
export interface SeedCompatService {
  /** The event type a seed client meant by `reference` (a rule's type, or its `eventId`) for the brand. */
  eventTypeFor(brandId: string, reference: string): Promise<string>;
  /** The brand a drop belongs to, if the drop exists. */
  dropBrand(dropId: string): Promise<string | undefined>;
  /** The id of the brand's perk with that uuid, if any. */
  perkIdByUuid(brandId: string, uuid: string): Promise<bigint | undefined>;
  /** The member's wallet, if they have one yet. */
  walletOf(identityKey: string): Promise<string | undefined>;
  /** Whether the event would earn now: the event path's own verdict. */
  eventEligibility(input: z.output<typeof seedEventEligibilityRequestSchema>): ReturnType<typeof checkEventEligibility>;
  /** A claim the seed client reports: keeps the display name, never counts or pays. */
  reportStats(input: z.output<typeof seedLeaderboardStatsRequestSchema>): ReturnType<typeof recordReportedStats>;
  userStats(brandId: string, identityKey: string): ReturnType<typeof readUserStats>;
  logActivity(input: z.output<typeof logActivityRequestSchema>): ReturnType<typeof logActivity>;
  calculateReward(input: {
    brandId: string;
    userIdentifier: string;
    eventType: string;
  }): ReturnType<typeof calculateReward>;
  processIntegration(input: z.output<typeof processIntegrationRequestSchema>): ReturnType<typeof processIntegration>;
}

export function createSeedCompatService(deps: {
  db: Database;
  clock: Clock;
  logger: Logger;
  brands: BrandCache;
  events: EventService;
  balances: BalanceService;
  /** The event judge's duplicate window (PTS_DUPLICATE_WINDOW_SECONDS), for the event eligibility verdict. */
  duplicateWindowSeconds: number;
}): SeedCompatService {
  const { db, clock, logger, brands, events, duplicateWindowSeconds } = deps;
  const seed = { db, clock, logger, brands };
  return {
    eventTypeFor: async (brandId, reference) => eventTypeForReference(await brands.get(brandId.trim()), reference),
    dropBrand: (dropId) => findDropBrand(db, dropId),
    perkIdByUuid: (brandId, uuid) => findBrandPerkIdByUuid(db, brandId, uuid),
    walletOf: (identityKey) => findWalletOf(db, identityKey),
    eventEligibility: (input) => checkEventEligibility({ ...seed, duplicateWindowSeconds }, input),
    reportStats: (input) => recordReportedStats(seed, input),
    userStats: (brandId, identityKey) =>
      readUserStats({ ...seed, readBalance: (user) => deps.balances.read(user) }, brandId, identityKey),
    logActivity: (input) => logActivity(seed, input),
    calculateReward: (input) => calculateReward(seed, input),
    processIntegration: (input) => processIntegration({ ...seed, events }, input),
  };
}
