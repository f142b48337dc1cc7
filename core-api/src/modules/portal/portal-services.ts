import {
  type AchievementDefinition,
  type AddConstraintInput,
  type AgentKey,
  AppError,
  type AuditPage,
  type AuditQuery,
  type Brand,
  type BrandKeyStatus,
  type BrandRedemption,
  type Campaign,
  type ChatGroup,
  type Clock,
  type CreateBrandInput,
  type CreateCampaignRequest,
  type CreateDropRequest,
  type CreatedBrand,
  type CreatePerkInput,
  type Drop,
  type MemberMatch,
  type MemberProfile,
  type PaymentMintResponse,
  type Perk,
  type PerkConstraint,
  type RotatedBrandKeys,
  type Rule,
  type RuleSettings,
  type StreakSettings,
  type UpdateBrandInput,
  type UpdateCampaignRequest,
  type UpdateDropRequest,
  type UpdatePerkInput,
  type UpdateStreakSettingsRequest,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookTestResult,
} from '@pts/shared';
import type { Logger } from 'pino';
import { readGasByBrand } from '../../chain/relayer-sender.ts';
import type { Database } from '../../db/database.ts';
import { hostMatchesDomain } from '../../http/cors.ts';
import type { HostResolver, SsrfPolicy } from '../../http/ssrf-guard.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import { brandAchievementDefinitions, setDefinitions } from '../achievements/achievements.service.ts';
import type { BrandAnalyticsService } from '../analytics/brand-analytics.ts';
import { listAuditEntries } from '../brands/audit-log.ts';
import { getBrandKeyStatus, rotateBrandKeys } from '../brands/brand-keys.service.ts';
import {
  type BrandServiceDeps,
  createBrand,
  getBrand,
  listRules,
  removeBrandDomain,
  setRule,
  updateBrand,
} from '../brands/brands.service.ts';
import { type CampaignDeps, createCampaign, listCampaigns, updateCampaign } from '../community/campaigns.service.ts';
import {
  type ChatGroupDeps,
  chatGroupBrand,
  deactivateChatGroup,
  listBrandChatGroups,
  updateChatGroup,
} from '../community/chat-groups.service.ts';
import { type TxtResolver, type VerifyDnsResult, verifyDns } from '../dns/dns.service.ts';
import { createDrop, type DropDeps, endDrop, listDrops, updateDrop } from '../drops/drops.service.ts';
import type { EventDeps } from '../events/events.service.ts';
import {
  awardMember,
  type BrandMembersDeps,
  readMemberProfile,
  searchMembers,
} from '../members/brand-members.service.ts';
import { findPayment } from '../payments/payments.repository.ts';
import type { PaymentDeps } from '../payments/payments.service.ts';
import { createCheckout, fulfilPayment, listBrandPurchases } from '../payments/payments.service.ts';
import {
  addConstraint,
  type ConstraintServiceDeps,
  listConstraints,
  removeConstraint,
} from '../perks/constraints/constraints.service.ts';
import { listBrandRedemptions } from '../perks/perks.repository.ts';
import {
  createPerk,
  getPerk,
  listPerks,
  type PerkServiceDeps,
  perkNotFound,
  updatePerk,
} from '../perks/perks.service.ts';
import { gasUsageView } from '../relayer/relayer-gas.routes.ts';
import { loadStreakSettings, type StreakDeps, updateStreakSettings } from '../streaks/streaks.service.ts';
import { findWebhookEndpoint, toWebhookEndpoint } from '../webhooks/webhooks.repository.ts';
import {
  deleteWebhookEndpoint,
  listWebhookDeliveries,
  replayWebhookDelivery,
  sendTestWebhook,
  setWebhookEndpoint,
  type WebhookServiceDeps,
} from '../webhooks/webhooks.service.ts';
import type { PortalAuthService } from './portal-auth.service.ts';
import type { PortalOperatorService } from './portal-operator.service.ts';
import type { PortalTeamService } from './portal-team.service.ts';

// The other modules' operations the portal's pages call, each bound to its dependencies once (compose.ts) so
// the portal's routers take named services and never the database handle (issue 23 §2). Each method calls the
// service the admin API, the CLI, the brand-signed services and the agent call; `actor` is who the audit log
// names (`portal:<email>`, `operator:<email>`). A check that an id belongs to the brand (a perk, a chat group,
// a purchase) is made here, before the change, and answers 404 like an unknown id.

/** Brands as the portal changes them (modules/brands, modules/dns): the brand, its rules, keys, domains, audit log. */
export interface PortalBrandService {
  get(brandId: string): Promise<Brand>;
  /** The brand's rules, active or paused, by event type. */
  listRules(brandId: string): Promise<Rule[]>;
  setRule(actor: string, brandId: string, rule: RuleSettings): Promise<Rule>;
  /** The brand's audit log, newest first, filtered and paged. */
  audit(brandId: string, query: AuditQuery): Promise<AuditPage>;
  /** Creates a brand with the spec 2.4 default rules (`pts brand create`); its keys are in this answer only. */
  create(actor: string, input: CreateBrandInput): Promise<CreatedBrand>;
  update(actor: string, brandId: string, input: UpdateBrandInput): Promise<Brand>;
  /** Takes a domain out of the brand's verified domains. */
  removeDomain(actor: string, brandId: string, domain: string): Promise<Brand>;
  keyStatus(brandId: string): Promise<BrandKeyStatus>;
  rotateKeys(actor: string, brandId: string, options: { graceMinutes?: number | undefined }): Promise<RotatedBrandKeys>;
  /**
   * Checks the `_pts` TXT record of `domain`, which must be the brand's website domain or under it (404
   * otherwise); a match adds it to the verified domains and tells every replica's brand caches.
   */
  verifyDomain(actor: string, brandId: string, domain: string): Promise<VerifyDnsResult>;
}

export function createPortalBrandService(
  deps: Omit<BrandServiceDeps, 'actor'> & { resolveTxt: TxtResolver; logger: Logger },
): PortalBrandService {
  const as = (actor: string): BrandServiceDeps => ({
    db: deps.db,
    secrets: deps.secrets,
    clock: deps.clock,
    changes: deps.changes,
    defaultCooldownHours: deps.defaultCooldownHours,
    actor,
  });
  return {
    get: (brandId) => getBrand(deps, brandId),
    listRules: (brandId) => listRules(deps, brandId),
    setRule: (actor, brandId, rule) => setRule(as(actor), brandId, rule),
    audit: (brandId, query) => listAuditEntries(deps.db, brandId, query),
    create: (actor, input) => createBrand(as(actor), input, { withDefaultRules: true }),
    update: (actor, brandId, input) => updateBrand(as(actor), brandId, input),
    removeDomain: (actor, brandId, domain) => removeBrandDomain(as(actor), brandId, domain),
    keyStatus: (brandId) => getBrandKeyStatus(deps, brandId),
    rotateKeys: (actor, brandId, options) => rotateBrandKeys(as(actor), brandId, options),
    async verifyDomain(actor, brandId, domain) {
      const brand = await getBrand(deps, brandId);
      if (!hostMatchesDomain(domain, brand.domain)) {
        throw new AppError(
          'NOT_FOUND',
          `${domain} is not ${brand.domain} or one of its subdomains; change the website domain first`,
          { field: 'domain', value: domain },
        );
      }
      // `changes` tells every replica's brand caches, as the public verify route does.
      return verifyDns(
        {
          db: deps.db,
          resolveTxt: deps.resolveTxt,
          clock: deps.clock,
          logger: deps.logger,
          actor,
          ...(deps.changes ? { changes: deps.changes } : {}),
        },
        { domain },
      );
    },
  };
}

/** A brand's loyalty members (modules/members): search, a member's page, a manual award. */
export interface PortalMemberService {
  /** At most 20 matches by e-mail, platform identity or wallet, most recently seen first. */
  search(brandId: string, text: string): Promise<MemberMatch[]>;
  /** A member's page; 404 when the brand has never seen them. */
  profile(brandId: string, accountKey: string): Promise<MemberProfile>;
  /** `amount` pts for `reason` through the event pipeline, audited with `actor`. */
  award(input: Parameters<typeof awardMember>[1]): ReturnType<typeof awardMember>;
}

export function createPortalMemberService(deps: BrandMembersDeps & { events: EventDeps }): PortalMemberService {
  return {
    search: (brandId, text) => searchMembers(deps, brandId, text),
    profile: (brandId, accountKey) => readMemberProfile(deps, brandId, accountKey),
    award: (input) => awardMember(deps, input),
  };
}

/** A perk's page in the portal: the perk, its eligibility constraints and its latest redemptions. */
export interface PortalPerkDetail {
  perk: Perk;
  constraints: PerkConstraint[];
  redemptions: BrandRedemption[];
}

/** A brand's perks (modules/perks): each method answers 404 for a perk of another brand, as for an unknown one. */
export interface PortalPerkService {
  /** The brand's perks, oldest first. */
  list(brandId: string): Promise<Perk[]>;
  detail(brandId: string, perkId: string): Promise<PortalPerkDetail>;
  /** Creates the perk and waits for its PerkNFT collection on chain. */
  create(actor: string, input: CreatePerkInput): Promise<Perk>;
  update(actor: string, brandId: string, perkId: string, input: UpdatePerkInput): Promise<Perk>;
  addConstraint(actor: string, brandId: string, perkId: string, input: AddConstraintInput): Promise<PerkConstraint>;
  removeConstraint(actor: string, brandId: string, perkId: string, constraintId: string): Promise<void>;
}

export function createPortalPerkService(
  deps: Omit<PerkServiceDeps, 'actor'> & Omit<ConstraintServiceDeps, 'actor'>,
): PortalPerkService {
  /** The perk, when it is the brand's; 404 otherwise (another brand's perk is not confirmed to exist). */
  const brandPerk = async (brandId: string, perkId: string) => {
    const perk = await getPerk(deps, BigInt(perkId));
    if (perk.brandId !== brandId) throw perkNotFound(perkId);
    return perk;
  };
  const as = (actor: string) => ({ ...deps, actor });
  return {
    list: (brandId) => listPerks(deps, brandId),
    async detail(brandId, perkId) {
      const perk = await brandPerk(brandId, perkId);
      const [constraints, redemptions] = await Promise.all([
        listConstraints(deps, BigInt(perkId)),
        listBrandRedemptions(deps.db, brandId, { perkId: BigInt(perkId) }),
      ]);
      return { perk, constraints, redemptions };
    },
    create: (actor, input) => createPerk(as(actor), input),
    async update(actor, brandId, perkId, input) {
      await brandPerk(brandId, perkId);
      return updatePerk(as(actor), BigInt(perkId), input);
    },
    async addConstraint(actor, brandId, perkId, input) {
      await brandPerk(brandId, perkId);
      return addConstraint(as(actor), BigInt(perkId), input);
    },
    async removeConstraint(actor, brandId, perkId, constraintId) {
      await brandPerk(brandId, perkId);
      await removeConstraint(as(actor), BigInt(perkId), constraintId);
    },
  };
}

/** A brand's hashtag campaigns, the X bot's (modules/community). */
export interface PortalCampaignService {
  /** Newest start first. */
  list(brandId: string): Promise<Campaign[]>;
  create(actor: string, brandId: string, input: CreateCampaignRequest): Promise<Campaign>;
  update(actor: string, brandId: string, campaignId: string, input: UpdateCampaignRequest): Promise<Campaign>;
}

export function createPortalCampaignService(deps: Omit<CampaignDeps, 'actor'>): PortalCampaignService {
  return {
    list: (brandId) => listCampaigns(deps, brandId),
    create: (actor, brandId, input) => createCampaign({ ...deps, actor }, brandId, input),
    update: (actor, brandId, campaignId, input) => updateCampaign({ ...deps, actor }, brandId, campaignId, input),
  };
}

/** A brand's drops (modules/drops). */
export interface PortalDropService {
  /** Newest first, with what is claimed and left. */
  list(brandId: string): Promise<Drop[]>;
  /** Also creates the brand's `drop_claim` rule when it has no active one. */
  create(actor: string, input: CreateDropRequest): Promise<Drop>;
  update(actor: string, brandId: string, dropId: string, input: UpdateDropRequest): Promise<Drop>;
  end(actor: string, brandId: string, dropId: string): Promise<Drop>;
}

export function createPortalDropService(deps: Omit<DropDeps, 'actor'>): PortalDropService {
  return {
    list: (brandId) => listDrops(deps.db, brandId),
    create: (actor, input) => createDrop({ ...deps, actor }, input),
    update: (actor, brandId, dropId, input) => updateDrop({ ...deps, actor }, brandId, dropId, input),
    end: (actor, brandId, dropId) => endDrop({ ...deps, actor }, brandId, dropId),
  };
}

/** The chat groups linked to a brand (modules/community); a group linked to another brand answers 404. */
export interface PortalChatGroupService {
  list(brandId: string): Promise<ChatGroup[]>;
  /** The bots' `PATCH /services/chat-groups`: name, configuration (a changed reward or cooldown is written to the rule). */
  update(
    actor: string,
    brandId: string,
    chatGroupId: string,
    input: Parameters<typeof updateChatGroup>[2],
  ): Promise<{ chatGroup: ChatGroup; rulesUpdated: string[] }>;
  /** Unlinks the group from the brand (a later `/setup` links it again). */
  deactivate(actor: string, brandId: string, chatGroupId: string): Promise<ChatGroup>;
}

export function createPortalChatGroupService(deps: Omit<ChatGroupDeps, 'actor'>): PortalChatGroupService {
  const brandGroup = async (brandId: string, chatGroupId: string) => {
    if ((await chatGroupBrand(deps.db, chatGroupId)) !== brandId.toLowerCase()) {
      throw new AppError('NOT_FOUND', `No chat group ${chatGroupId} is linked to this brand`, {
        field: 'chatGroupId',
        value: chatGroupId,
      });
    }
  };
  return {
    list: (brandId) => listBrandChatGroups(deps.db, brandId),
    async update(actor, brandId, chatGroupId, input) {
      await brandGroup(brandId, chatGroupId);
      return updateChatGroup({ ...deps, actor }, chatGroupId, input);
    },
    async deactivate(actor, brandId, chatGroupId) {
      await brandGroup(brandId, chatGroupId);
      return deactivateChatGroup({ ...deps, actor }, chatGroupId);
    },
  };
}

/** A brand's streak settings and milestones (modules/streaks). */
export interface PortalStreakService {
  /** The settings in force (defaults where the brand stored none) and whether it stored its own. */
  settings(brandId: string): Promise<{ settings: StreakSettings; custom: boolean }>;
  /** Changes some settings (the others keep their value); the result must be valid as a whole. */
  update(actor: string, brandId: string, patch: UpdateStreakSettingsRequest): Promise<StreakSettings>;
}

export function createPortalStreakService(deps: Omit<StreakDeps, 'actor'>): PortalStreakService {
  return {
    settings: (brandId) => loadStreakSettings(deps, brandId),
    update: (actor, brandId, patch) => updateStreakSettings({ ...deps, actor }, brandId, patch),
  };
}

/** A brand's achievement definitions (modules/achievements). */
export interface PortalAchievementService {
  /** The definitions in force (`defaults: true` while the brand has none of its own). */
  definitions(brandId: string): Promise<{ defaults: boolean; definitions: AchievementDefinition[] }>;
  /** Replaces them (an empty list restores the defaults); answers the definitions now in force. */
  setDefinitions(
    actor: string,
    brandId: string,
    definitions: Parameters<typeof setDefinitions>[2],
  ): Promise<{ defaults: boolean; definitions: AchievementDefinition[] }>;
}

export function createPortalAchievementService(deps: { db: Database; clock: Clock }): PortalAchievementService {
  return {
    definitions: (brandId) => brandAchievementDefinitions(deps.db, brandId),
    setDefinitions: (actor, brandId, definitions) =>
      setDefinitions(deps.db, brandId, definitions, { actor, at: deps.clock.now() }),
  };
}

/** A brand's webhook endpoint and deliveries (modules/webhooks). */
export interface PortalWebhookService {
  /** The endpoint (never its secret), or null. */
  endpoint(brandId: string): Promise<WebhookEndpoint | null>;
  /** The latest deliveries, newest first. */
  deliveries(brandId: string, limit: number): Promise<WebhookDelivery[]>;
  /** Sets the URL; a new endpoint or `rotateSecret` issues a signing secret, in this answer only. */
  set(
    actor: string,
    brandId: string,
    input: Parameters<typeof setWebhookEndpoint>[2],
  ): ReturnType<typeof setWebhookEndpoint>;
  remove(actor: string, brandId: string): Promise<void>;
  /** Sends a signed webhook.test event now and reports what the receiver answered. */
  test(actor: string, brandId: string): Promise<WebhookTestResult>;
  /** Queues a delivery of the brand again (another brand's is unknown: 404). */
  replay(actor: string, brandId: string, deliveryId: string): Promise<WebhookDelivery>;
}

export function createPortalWebhookService(deps: {
  db: Database;
  secrets: SecretBox;
  clock: Clock;
  /** Local mode (http and loopback allowed) or strict. */
  policy: SsrfPolicy;
  timeoutMs: number;
  /** Replaces DNS for webhook URL checks in tests. */
  resolve?: HostResolver | undefined;
}): PortalWebhookService {
  const as = (actor: string): WebhookServiceDeps => ({ ...deps, actor });
  return {
    endpoint: async (brandId) => {
      const row = await findWebhookEndpoint(deps.db, brandId);
      return row ? toWebhookEndpoint(row) : null;
    },
    deliveries: (brandId, limit) => listWebhookDeliveries(deps, brandId, { limit }),
    set: (actor, brandId, input) => setWebhookEndpoint(as(actor), brandId, input),
    remove: (actor, brandId) => deleteWebhookEndpoint(as(actor), brandId),
    test: (actor, brandId) => sendTestWebhook(as(actor), brandId),
    replay: (actor, brandId, deliveryId) => replayWebhookDelivery(as(actor), deliveryId, { brandId }),
  };
}

/** A brand's token purchases (modules/payments) and the relayer gas charged to it. */
export interface PortalBillingService {
  /** Every purchase with its mint, and totals. */
  purchases(brandId: string): ReturnType<typeof listBrandPurchases>;
  /** The relayer gas charged to the brand, all time. */
  gas(brandId: string): Promise<ReturnType<typeof gasUsageView>>;
  /** Opens the same hosted checkout as `/pts-api/create-checkout`, in dollars. */
  checkout(
    actor: string,
    input: { brandId: string; amount: number; userEmail: string; successUrl: string; cancelUrl: string },
  ): Promise<{ sessionId: string; checkoutUrl: string }>;
  /** Mints a paid purchase of the brand now (idempotent); another brand's purchase is unknown: 404. */
  confirm(brandId: string, sessionId: string): Promise<PaymentMintResponse>;
}

export function createPortalBillingService(deps: PaymentDeps & { chain: { chainId: number } }): PortalBillingService {
  return {
    purchases: (brandId) => listBrandPurchases(deps, brandId),
    async gas(brandId) {
      const [gas] = await readGasByBrand(deps.db, deps.chain.chainId, brandId);
      return gasUsageView(gas?.gasUsed ?? 0n, gas?.costWei ?? 0n, gas?.transactions ?? 0);
    },
    checkout: (actor, input) => createCheckout(deps, { ...input, currency: 'usd' }, { actor }),
    async confirm(brandId, sessionId) {
      const purchase = await findPayment(deps.db, sessionId);
      if (purchase?.brand_id !== brandId) {
        throw new AppError('NOT_FOUND', `No purchase ${sessionId} of this brand`, { field: 'sessionId' });
      }
      return fulfilPayment(deps, sessionId);
    },
  };
}

/**
 * What an agent key does in the portal: agent/keys/agent-keys.service.ts's functions, bound by the composition
 * root (a module does not import the agent layer). `actor` names the portal user in the audit log; `brandId`
 * scopes a revoke.
 */
export interface PortalAgentKeyService {
  create(
    actor: string,
    input: { name: string; brandIds: string[]; canManageProgram: boolean },
  ): Promise<{ keyId: string; secret: string }>;
  list(brandId: string): Promise<AgentKey[]>;
  revoke(actor: string, keyId: string, brandId: string): Promise<{ revoked: boolean }>;
}

/** The named services the brand portal's routers receive (compose.ts `composePortalServices` builds each once). */
export interface PortalServices {
  /** Sign-in, sessions, passwords, invite and reset links. */
  auth: PortalAuthService;
  /** Roles, invites, the team, the operator flag. */
  team: PortalTeamService;
  /** The operators' brand list. */
  operators: PortalOperatorService;
  brands: PortalBrandService;
  /** The dashboard's read model (the agent's `get_brand_dashboard` reads the same). */
  analytics: BrandAnalyticsService;
  members: PortalMemberService;
  perks: PortalPerkService;
  campaigns: PortalCampaignService;
  drops: PortalDropService;
  chatGroups: PortalChatGroupService;
  streaks: PortalStreakService;
  achievements: PortalAchievementService;
  webhooks: PortalWebhookService;
  billing: PortalBillingService;
  agentKeys: PortalAgentKeyService;
}
