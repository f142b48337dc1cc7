import {
  AppError,
  amountProblem,
  type Clock,
  type CurrencyCode,
  PTS_PER_USD,
  SIMULATION_TOP_CHANGES,
  type SimulatedCampaign,
  type SimulatedRule,
  type SimulateSettings,
  type Simulation,
  tierPeriodStart,
} from '@pts/shared';
import type { Database } from '../../db/database.ts';
import { findBrandByAddress } from '../brands/brands.repository.ts';
import { brandNotFound } from '../brands/brands.service.ts';
import type { JudgeSettings } from '../events/event-rules.ts';
import type { RuleRecord } from '../events/events.repository.ts';
import { readRulesOfBrands } from '../events/rule-reads.ts';
import { loadTierTable, normalizeTiers } from '../tiers/tiers.repository.ts';
import {
  type ReplayCursor,
  readBrandCampaigns,
  readCountersBefore,
  readReplayPage,
  readTierBasesBefore,
} from './simulator.repository.ts';
import {
  counterKey,
  createReplay,
  type MemberOutcome,
  type ReplayCampaign,
  type ReplaySetup,
  type ReplayTiers,
} from './simulator-replay.ts';

/** Rows read per page: the replay never holds more of the window than this (docs/simulator.md). */
export const SIMULATION_PAGE_SIZE = 5000;
const DAY_MS = 86_400_000;

export interface SimulatorDeps {
  db: Database;
  clock: Clock;
  /** The event path's own settings (PTS_DUPLICATE_WINDOW_SECONDS). */
  settings: JudgeSettings;
}

/** Progress of a running simulation (the CLI prints it): rows replayed so far. */
export type SimulationProgress = (progress: { events: number }) => void;

export interface SimulatorService {
  /** What the last `days` would have issued under the proposal, against what was issued (docs/simulator.md). */
  simulate(brandId: string, request: SimulateSettings, onProgress?: SimulationProgress): Promise<Simulation>;
}

export function createSimulatorService(deps: SimulatorDeps): SimulatorService {
  return { simulate: (brandId, request, onProgress) => simulate(deps, brandId, request, onProgress) };
}

/** 400 naming the request's field. */
function invalid(field: string, message: string, value?: string): AppError {
  return new AppError('VALIDATION_ERROR', `${field} ${message}`, {
    field,
    ...(value === undefined ? {} : { value }),
  });
}

/** The brand's rules with the proposal applied: each proposed rule's fields over the current rule's. */
export function proposedRules(
  current: RuleRecord[],
  proposal: SimulatedRule[],
  brandId: string,
  currency: string,
  at: Date,
): Map<string, RuleRecord> {
  const rules = new Map(current.map((rule) => [rule.event_type, rule]));
  const seen = new Set<string>();
  proposal.forEach((input, i) => {
    if (seen.has(input.eventType)) throw invalid(`rules.${i}.eventType`, `lists ${input.eventType} twice`);
    seen.add(input.eventType);
    const existing = rules.get(input.eventType);
    if (!existing && input.rewardAmount === undefined && input.rate === undefined) {
      throw invalid(
        `rules.${i}.rewardAmount`,
        `is needed: the brand has no ${input.eventType} rule yet, so send rewardAmount (fixed pts) or rate`,
      );
    }
    if (input.rate && input.rate.currency !== currency) {
      throw invalid(`rules.${i}.rate.currency`, `must be the brand's currency ${currency}`, input.rate.currency);
    }
    if (input.rate && input.minValue !== undefined) {
      const problem = amountProblem(input.minValue, currency as CurrencyCode);
      if (problem) throw invalid(`rules.${i}.minValue`, problem, input.minValue);
    }
    const reward =
      input.rate !== undefined
        ? {
            reward_amount: 0n,
            rate: {
              ...input.rate,
              rounding: input.rate.rounding ?? 'down',
              ...(input.minValue === undefined ? {} : { minValue: input.minValue }),
              ...(input.maxReward === undefined ? {} : { maxReward: input.maxReward }),
            },
          }
        : input.rewardAmount !== undefined
          ? { reward_amount: BigInt(input.rewardAmount), rate: null }
          : {};
    rules.set(input.eventType, {
      id: existing?.id ?? `simulated_${input.eventType}`,
      brand_id: brandId,
      event_type: input.eventType,
      reward_amount: 0n,
      rate: null,
      max_claims_per_user: -1,
      max_total_claims: null,
      total_claims: 0,
      cooldown_hours: 0,
      detection_method: 'manual',
      detection_config: {},
      is_custom: false,
      created_at: at,
      updated_at: at,
      ...existing,
      ...reward,
      ...(input.cooldownHours === undefined ? {} : { cooldown_hours: input.cooldownHours }),
      ...(input.maxClaims === undefined ? {} : { max_claims_per_user: input.maxClaims }),
      ...(input.maxTotal === undefined ? {} : { max_total_claims: input.maxTotal }),
      active: input.active ?? existing?.active ?? true,
      archived_at: input.active === true ? null : (existing?.archived_at ?? null),
    });
  });
  return rules;
}

/** The brand's campaigns with the proposed terms applied (exactly one of reward and multiplier stays set). */
export function proposedCampaigns(
  current: Map<string, ReplayCampaign>,
  proposal: SimulatedCampaign[],
): Map<string, ReplayCampaign> {
  const campaigns = new Map(current);
  proposal.forEach((input, i) => {
    const existing = campaigns.get(input.id);
    if (!existing) throw invalid(`campaigns.${i}.id`, 'is not a campaign of this brand', input.id);
    const reward = input.reward !== undefined && input.reward !== null;
    const multiplier = input.rewardMultiplier !== undefined && input.rewardMultiplier !== null;
    if (reward && multiplier) throw invalid(`campaigns.${i}.reward`, 'and rewardMultiplier: send one of them');
    campaigns.set(input.id, {
      ...existing,
      ...(reward ? { reward: input.reward as number, rewardMultiplier: null } : {}),
      ...(multiplier ? { reward: null, rewardMultiplier: input.rewardMultiplier as number } : {}),
      ...(input.maxClaimsPerUser === undefined ? {} : { maxClaimsPerUser: input.maxClaimsPerUser }),
    });
  });
  return campaigns;
}

/** pts at the token price (1 USD = PTS_PER_USD pts), exact to the thousandth of a dollar. */
export function costOf(pts: bigint): string {
  const mills = (pts * 1000n) / BigInt(PTS_PER_USD);
  const sign = mills < 0n ? '-' : '';
  const abs = mills < 0n ? -mills : mills;
  return `${sign}${abs / 1000n}.${(abs % 1000n).toString().padStart(3, '0')}`;
}

async function simulate(
  deps: SimulatorDeps,
  brandId: string,
  request: SimulateSettings,
  onProgress?: SimulationProgress,
): Promise<Simulation> {
  const started = Date.now();
  const to = deps.clock.now();
  const from = new Date(to.getTime() - request.days * DAY_MS);
  const setup = await replaySetup(deps, brandId, request, from, to);
  const replay = createReplay(setup.replay);
  let cursor: ReplayCursor | undefined;
  let events = 0;
  do {
    const page = await readReplayPage(deps.db, { brandId, from, to, cursor, limit: SIMULATION_PAGE_SIZE });
    for (const event of page.events) replay.step(event);
    events += page.events.length;
    cursor = page.cursor;
    onProgress?.({ events });
  } while (cursor);
  const result = replay.result();
  return {
    success: true,
    brandId,
    days: request.days,
    from: from.toISOString(),
    to: to.toISOString(),
    tokenPrice: { currency: 'USD', ptsPerUsd: PTS_PER_USD },
    events: { total: events, replayed: result.replayed, passedThrough: result.passedThrough },
    ...summarize(result.members),
    tiers: tierDistribution(result.members, setup),
    durationMs: Date.now() - started,
  };
}

/** The rules, terms and starting state of one replay. */
async function replaySetup(deps: SimulatorDeps, brandId: string, request: SimulateSettings, from: Date, to: Date) {
  const brand = await findBrandByAddress(deps.db, brandId);
  if (!brand) throw brandNotFound(brandId);
  const currency = brand.currency as CurrencyCode;
  const current = (await readRulesOfBrands(deps.db, [brandId])).get(brandId) ?? [];
  const rules = proposedRules(current, request.rules, brandId, currency, to);
  const campaigns = proposedCampaigns(await readBrandCampaigns(deps.db, brandId), request.campaigns);
  const currentTable = await loadTierTable(deps.db, brandId, currency);
  let proposedTable: ReplayTiers | undefined;
  let tierNames: { current: string[] | undefined; simulated: string[] | undefined } = {
    current: currentTable?.stored.map((t) => t.name),
    simulated: currentTable?.stored.map((t) => t.name),
  };
  let simulatedPeriod = currentTable?.period;
  if (request.tiers) {
    const { stored, levels } = normalizeProposedTiers(request.tiers, currency);
    proposedTable = { basis: request.tiers.basis, levels };
    tierNames = { ...tierNames, simulated: stored.map((t) => t.name) };
    simulatedPeriod = request.tiers.period;
  }
  const tiers: ReplayTiers | undefined = proposedTable ?? currentTable;
  const baseline = await readCountersBefore(deps.db, brandId, from);
  const counters: ReplaySetup['counters'] = new Map();
  const ruleTotals = new Map<string, number>();
  for (const counter of baseline) {
    counters.set(counterKey(counter.member, counter.eventType), {
      claims: counter.claims,
      last_claim_at: counter.lastClaimAt,
    });
    if (!counter.eventType.startsWith('campaign:')) {
      ruleTotals.set(counter.eventType, (ruleTotals.get(counter.eventType) ?? 0) + counter.claims);
    }
  }
  const basesOver = (period: Parameters<typeof tierPeriodStart>[0] | undefined) =>
    period ? readTierBasesBefore(deps.db, brandId, tierPeriodStart(period, from), from) : Promise.resolve(new Map());
  const currentTierBasis = await basesOver(currentTable?.period);
  const tierBasis = simulatedPeriod === currentTable?.period ? currentTierBasis : await basesOver(simulatedPeriod);
  const replay: ReplaySetup = {
    rules,
    campaigns,
    currency,
    settings: deps.settings,
    tiers,
    currentTiers: currentTable,
    counters,
    ruleTotals,
    tierBasis,
    currentTierBasis,
  };
  return { replay, tierNames };
}

/** A proposed table checked as PUT …/tiers checks it, its fields named under `tiers.`. */
function normalizeProposedTiers(input: NonNullable<SimulateSettings['tiers']>, currency: CurrencyCode) {
  try {
    return normalizeTiers(input, currency);
  } catch (error) {
    if (error instanceof AppError && error.code === 'VALIDATION_ERROR') {
      const field = `tiers.${String(error.details?.field ?? 'tiers')}`;
      throw invalid(field, error.message.replace(/^\S+\s/, ''));
    }
    throw error;
  }
}

/** Both columns' totals, the members who earn more, less or the same, and the largest changes. */
function summarize(members: Map<string, MemberOutcome>) {
  let actual = 0n;
  let simulated = 0n;
  let actualEarning = 0;
  let simulatedEarning = 0;
  const affected = { earnMore: 0, earnLess: 0, same: 0 };
  const changes: { member: string; actual: bigint; simulated: bigint; difference: bigint }[] = [];
  for (const [member, outcome] of members) {
    actual += outcome.actual;
    simulated += outcome.simulated;
    if (outcome.actual > 0n) actualEarning += 1;
    if (outcome.simulated > 0n) simulatedEarning += 1;
    const difference = outcome.simulated - outcome.actual;
    if (difference > 0n) affected.earnMore += 1;
    else if (difference < 0n) affected.earnLess += 1;
    else affected.same += 1;
    if (difference !== 0n) changes.push({ member, actual: outcome.actual, simulated: outcome.simulated, difference });
  }
  const magnitude = (d: bigint) => (d < 0n ? -d : d);
  changes.sort((a, b) => {
    const byMagnitude = magnitude(b.difference) - magnitude(a.difference);
    return byMagnitude > 0n ? 1 : byMagnitude < 0n ? -1 : a.member < b.member ? -1 : 1;
  });
  return {
    actual: { ptsIssued: actual.toString(), cost: costOf(actual), membersEarning: actualEarning },
    simulated: { ptsIssued: simulated.toString(), cost: costOf(simulated), membersEarning: simulatedEarning },
    difference: { pts: (simulated - actual).toString(), cost: costOf(simulated - actual) },
    membersAffected: affected,
    topChanges: changes.slice(0, SIMULATION_TOP_CHANGES).map((c) => ({
      member: c.member,
      actual: c.actual.toString(),
      simulated: c.simulated.toString(),
      difference: c.difference.toString(),
    })),
  };
}

/** Members of the window per tier at its end, under the current table and under the simulated one. */
function tierDistribution(
  members: Map<string, MemberOutcome>,
  setup: { tierNames: { current: string[] | undefined; simulated: string[] | undefined } },
): Simulation['tiers'] {
  const { current, simulated } = setup.tierNames;
  if (!simulated) return null;
  const count = (names: string[], pick: (o: MemberOutcome) => number) => {
    const counts = names.map((name) => ({ name, members: 0 }));
    for (const outcome of members.values()) {
      const entry = counts[Math.min(pick(outcome), names.length - 1)];
      if (entry) entry.members += 1;
    }
    return counts;
  };
  return {
    before: current ? count(current, (o) => o.actualTier) : null,
    after: count(simulated, (o) => o.simulatedTier),
  };
}
