import { AppError, type Perk, type Rate, type Rule, ruleInputSchema, UNLIMITED } from '@pts/shared';
import { parseInput } from '../../http/validate.ts';
import { type BrandServiceDeps, listRules, setRule } from '../../modules/brands/brands.service.ts';
import { lockRuleTotals, ruleKeyOf } from '../../modules/events/events.repository.ts';
import { findPerk } from '../../modules/perks/perks.repository.ts';
import { createPerk, type PerkServiceDeps, perkNotFound, updatePerk } from '../../modules/perks/perks.service.ts';
import { ruleCapOut } from '../agent-limits.ts';
import type { AgentServiceDeps } from '../agent-services.ts';

/**
 * A brand's program changed by an agent key (docs/agent-api/program.md): the very services of the admin API
 * and `pts rule set` / `pts perk`, so every change is audited (actor `agent:<keyId>`) and told to the brand
 * cache, which the event path reads — a rule an agent creates is honoured by the next event.
 */

/**
 * The agent view of a rule: `maxClaims` -1 (UNLIMITED) means unlimited — the spelling every agent tool takes on
 * input (limitSchema) and suggest_brand_events gives — and `enabled` is the rule's `active`.
 */
export interface AgentEventRule {
  eventId: string;
  brandId: string;
  eventType: string;
  /** The fixed reward; 0 for a rate rule. */
  rewardAmount: number;
  /** A rate rule: `pts` per `per` of the event's value (process_event sends `value`). */
  rate?: Rate;
  minValue?: string;
  maxReward?: number;
  cooldownHours: number;
  maxClaims: number;
  enabled: boolean;
}

export function toAgentRule(rule: Rule): AgentEventRule {
  return {
    eventId: rule.eventId,
    brandId: rule.brandId,
    eventType: rule.eventType,
    rewardAmount: rule.rewardAmount,
    ...rewardTermsOf(rule),
    cooldownHours: rule.cooldownHours,
    maxClaims: ruleCapOut(rule.maxClaims),
    enabled: rule.active,
  };
}

/** The brands service as an agent key uses it: audited under the key, every change told to the caches. */
export function brandServiceFor(d: AgentServiceDeps, keyId: string): BrandServiceDeps {
  return {
    db: d.db,
    secrets: d.secrets,
    clock: d.clock,
    changes: d.changes,
    defaultCooldownHours: d.settings.defaultCooldownHours,
    actor: `agent:${keyId}`,
  };
}

/** The perk service as an agent key uses it (the admin API's chain access, audited under the key). */
export function perkServiceFor(d: AgentServiceDeps, keyId: string): PerkServiceDeps {
  return {
    db: d.db,
    clock: d.clock,
    perkChain: d.perkChain,
    logger: d.logger,
    actor: `agent:${keyId}`,
    changes: d.changes,
  };
}

/** What a rule pays: a fixed `rewardAmount`, or a `rate` with its optional minimum value and cap. */
export interface RewardTerms {
  rewardAmount?: number | undefined;
  rate?: Rate | undefined;
  minValue?: string | undefined;
  maxReward?: number | undefined;
}

/** A rule's reward terms as setRule takes them back: its rate with its limits, or its fixed amount. */
function rewardTermsOf(rule: Rule): RewardTerms {
  if (!rule.rate) return { rewardAmount: rule.rewardAmount };
  return {
    rate: rule.rate,
    ...(rule.minValue === undefined ? {} : { minValue: rule.minValue }),
    ...(rule.maxReward === undefined ? {} : { maxReward: rule.maxReward }),
  };
}

/**
 * The terms after a change: a new rate or fixed amount replaces the kind (a rate keeps the current minimum
 * and cap unless given); minValue / maxReward alone change a rate rule's limits. Refused with 400 (saying
 * what to send) when the result is not a rule: both kinds, or limits on a fixed rule.
 */
function changedTerms(current: Rule, change: RewardTerms): RewardTerms {
  const kept = rewardTermsOf(current);
  const merged: RewardTerms =
    change.rewardAmount !== undefined && change.rate === undefined
      ? { rewardAmount: change.rewardAmount }
      : {
          ...kept,
          ...(change.rate === undefined ? {} : { rate: change.rate, rewardAmount: change.rewardAmount }),
        };
  if (change.minValue !== undefined) merged.minValue = change.minValue;
  if (change.maxReward !== undefined) merged.maxReward = change.maxReward;
  return parseInput(ruleInputSchema, { eventType: current.eventType, ...merged }, 'rule change');
}

export interface CreateBrandEventInput extends RewardTerms {
  eventType: string;
  /** Per-user claims; null = unlimited (stored as the rules' -1). */
  maxClaims: number | null;
  cooldownHours: number;
}

/** Creates a rule; 409 when the brand already has one for the event type (update_brand_event changes it). */
export async function createBrandEvent(
  d: AgentServiceDeps,
  keyId: string,
  brandId: string,
  input: CreateBrandEventInput,
): Promise<AgentEventRule> {
  const service = brandServiceFor(d, keyId);
  const existing = (await listRules(service, brandId)).find((rule) => rule.eventType === input.eventType);
  if (existing) {
    throw new AppError(
      'CONFLICT',
      `Brand ${brandId} already has an event ${input.eventType} (eventId ${existing.eventId}); change it with update_brand_event`,
      { field: 'eventType', value: input.eventType, eventId: existing.eventId },
    );
  }
  const { eventType: _type, ...terms } = parseInput(
    ruleInputSchema,
    {
      eventType: input.eventType,
      rewardAmount: input.rewardAmount,
      rate: input.rate,
      minValue: input.minValue,
      maxReward: input.maxReward,
    },
    'rule',
  );
  const rule = await setRule(service, brandId, {
    eventType: input.eventType,
    ...terms,
    cooldownHours: input.cooldownHours,
    maxClaims: input.maxClaims ?? UNLIMITED,
    active: true,
  });
  return toAgentRule(rule);
}

/**
 * Changes a rule's reward and/or switch, keeping every other setting (setRule replaces a whole rule). The
 * rule row is locked while it is read and rewritten, so two concurrent updates of different fields both
 * land; the caches are told after the commit.
 */
export async function updateBrandEvent(
  d: AgentServiceDeps,
  keyId: string,
  brandId: string,
  eventId: string,
  input: RewardTerms & { enabled?: boolean | undefined },
): Promise<AgentEventRule> {
  const service = brandServiceFor(d, keyId);
  const rule = await d.db.transaction().execute(async (trx) => {
    const key = { brand_id: brandId, id: eventId };
    if (!(await lockRuleTotals(trx, [key])).has(ruleKeyOf(key))) throw ruleNotFound(brandId, eventId);
    const current = (await listRules({ db: trx }, brandId)).find((candidate) => candidate.eventId === eventId);
    if (!current) throw ruleNotFound(brandId, eventId);
    return setRule({ ...service, db: trx, changes: undefined }, brandId, {
      eventType: current.eventType,
      ...pickTerms(changedTerms(current, input)),
      cooldownHours: current.cooldownHours,
      maxClaims: current.maxClaims,
      maxTotal: current.maxTotal,
      detectionMethod: current.detectionMethod,
      detectionConfig: current.detectionConfig,
      active: input.enabled ?? current.active,
    });
  });
  d.changes.emit({ kind: 'rules', brandId: rule.brandId });
  return toAgentRule(rule);
}

/** Only the reward fields of a parsed rule input (its eventType stays the current rule's). */
function pickTerms(terms: RewardTerms): RewardTerms {
  const { rewardAmount, rate, minValue, maxReward } = terms;
  return {
    ...(rewardAmount === undefined ? {} : { rewardAmount }),
    ...(rate === undefined ? {} : { rate }),
    ...(minValue === undefined ? {} : { minValue }),
    ...(maxReward === undefined ? {} : { maxReward }),
  };
}

function ruleNotFound(brandId: string, eventId: string): AppError {
  return new AppError('NOT_FOUND', `Brand ${brandId} has no event ${eventId}; get_brand lists its eventIds`, {
    field: 'eventId',
    value: eventId,
  });
}

export interface CreateBrandPerkInput {
  name: string;
  description: string;
  priceInPoints: number;
  /** null = unlimited. */
  maxSupply: number | null;
  /** How many one member may hold; null = unlimited (stored as the contract's 0). */
  maxPerUser: number | null;
  category: string;
}

/** A perk's per-member limit as the perk service and the contract take it: 0 = unlimited. */
const perUserLimit = (limit: number | null) => limit ?? 0;

/** Creates a perk and its PerkNFT collection through the admin API's service. */
export function createBrandPerk(
  d: AgentServiceDeps,
  keyId: string,
  brandId: string,
  input: CreateBrandPerkInput,
): Promise<Perk> {
  return createPerk(perkServiceFor(d, keyId), {
    brandId,
    name: input.name,
    description: input.description,
    category: input.category,
    cost: input.priceInPoints,
    maxSupply: input.maxSupply,
    maxPerUser: perUserLimit(input.maxPerUser),
  });
}

/** Changes a perk's price, switch and/or limits; 404 unless the perk is the brand's. */
export async function updateBrandPerk(
  d: AgentServiceDeps,
  keyId: string,
  brandId: string,
  collectionId: string | number,
  input: {
    priceInPoints?: number | undefined;
    isActive?: boolean | undefined;
    maxSupply?: number | null | undefined;
    maxPerUser?: number | null | undefined;
  },
): Promise<Perk> {
  const perkId = await brandPerkId(d, brandId, collectionId);
  return updatePerk(perkServiceFor(d, keyId), perkId, {
    ...(input.priceInPoints === undefined ? {} : { cost: input.priceInPoints }),
    ...(input.isActive === undefined ? {} : { active: input.isActive }),
    ...(input.maxSupply === undefined ? {} : { maxSupply: input.maxSupply }),
    ...(input.maxPerUser === undefined ? {} : { maxPerUser: perUserLimit(input.maxPerUser) }),
  });
}

/** The integer collection id of the brand's perk named by uuid or integer id; 404 otherwise. */
async function brandPerkId(d: AgentServiceDeps, brandId: string, ref: string | number): Promise<bigint> {
  const query = d.db.selectFrom('perks').select(['id', 'brand_id']);
  const row =
    typeof ref === 'string' && ref.includes('-')
      ? await query.where('public_id', '=', ref).executeTakeFirst()
      : await findPerk(d.db, BigInt(ref));
  if (!row || row.brand_id !== brandId) throw perkNotFound(String(ref));
  return BigInt(row.id);
}

/** A brand's program as an agent key changes it (program.tools.ts), over the handle compose.ts gives. */
export interface AgentProgramService {
  createBrandEvent(keyId: string, brandId: string, input: CreateBrandEventInput): Promise<AgentEventRule>;
  updateBrandEvent(
    keyId: string,
    brandId: string,
    eventId: string,
    input: { rewardAmount?: number | undefined; enabled?: boolean | undefined },
  ): Promise<AgentEventRule>;
  createBrandPerk(keyId: string, brandId: string, input: CreateBrandPerkInput): Promise<Perk>;
  updateBrandPerk(
    keyId: string,
    brandId: string,
    collectionId: string | number,
    input: Parameters<typeof updateBrandPerk>[4],
  ): Promise<Perk>;
}

export function createAgentProgramService(d: AgentServiceDeps): AgentProgramService {
  return {
    createBrandEvent: (keyId, brandId, input) => createBrandEvent(d, keyId, brandId, input),
    updateBrandEvent: (keyId, brandId, eventId, input) => updateBrandEvent(d, keyId, brandId, eventId, input),
    createBrandPerk: (keyId, brandId, input) => createBrandPerk(d, keyId, brandId, input),
    updateBrandPerk: (keyId, brandId, collectionId, input) => updateBrandPerk(d, keyId, brandId, collectionId, input),
  };
}
