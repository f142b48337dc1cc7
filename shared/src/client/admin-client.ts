import { z } from 'zod';
import type { ErrorDetails } from '../errors.ts';
import {
  type AgentKey,
  agentKeyListSchema,
  type CreateAgentKeyRequest,
  type CreatedAgentKey,
  createdAgentKeySchema,
  revokedAgentKeySchema,
} from '../schemas/agent-keys.ts';
import {
  type AdminManualAwardRequest,
  type AdminMemberDeductionRequest,
  type ManualAwardResponse,
  type MemberDeductionResponse,
  manualAwardResponseSchema,
  memberDeductionResponseSchema,
} from '../schemas/brand-members.ts';
import {
  type Brand,
  brandSchema,
  type CreateBrandInput,
  type CreatedBrand,
  createdBrandSchema,
  type EndedPreviousBrandKey,
  endedPreviousBrandKeySchema,
  type RotateBrandKeysRequest,
  type RotatedBrandKeys,
  type Rule,
  rotatedBrandKeysSchema,
  ruleSchema,
  type SetRuleRequest,
  type UpdateBrandInput,
} from '../schemas/brands.ts';
import {
  type Campaign,
  type CreateCampaignRequest,
  campaignResponseSchema,
  campaignsResponseSchema,
  type UpdateCampaignRequest,
} from '../schemas/community.ts';
import { createDropResponseSchema, type Drop, dropsResponseSchema, type UpdateDropRequest } from '../schemas/compat.ts';
import {
  type AddConstraintRequest,
  type PerkConstraint,
  perkConstraintResponseSchema,
  perkConstraintsResponseSchema,
} from '../schemas/constraints.ts';
import { type GrowthLead, growthLeadListSchema } from '../schemas/growth-leads.ts';
import { type IssuedUserToken, issueUserTokenResponseSchema } from '../schemas/identity.ts';
import { type BrandPurchases, brandPurchasesResponseSchema } from '../schemas/payments.ts';
import {
  type CreatePerkRequest,
  type Perk,
  perkResponseSchema,
  perksResponseSchema,
  type UpdatePerkRequest,
} from '../schemas/perks.ts';
import { type PortalInvite, type PortalRole, portalInviteSchema } from '../schemas/portal.ts';
import {
  type PortalOperatorInvite,
  type PortalOperatorRemoval,
  portalOperatorInviteSchema,
  portalOperatorRemovalSchema,
} from '../schemas/portal-operator.ts';
import {
  type ReferralProgramResponse,
  type ReferralStatsResponse,
  referralProgramResponseSchema,
  referralStatsResponseSchema,
  type SetReferralProgramRequest,
} from '../schemas/referrals.ts';
import { type RelayerGasResponse, relayerGasResponseSchema } from '../schemas/relayer-gas.ts';
import { type AdminReversalRequest, type ReversalResponse, reversalResponseSchema } from '../schemas/reversals.ts';
import {
  type ShopifyConnection,
  type ShopifyConnectRequest,
  type ShopifyDisconnectResponse,
  type ShopifyIntegration,
  shopifyConnectResponseSchema,
  shopifyDisconnectResponseSchema,
  shopifyIntegrationSchema,
} from '../schemas/shopify.ts';
import { type SimulateRequest, type Simulation, simulationSchema } from '../schemas/simulator.ts';
import { type SetTiersRequest, type TiersResponse, tiersResponseSchema } from '../schemas/tiers.ts';
import {
  type SavedWebhookEndpoint,
  type SetWebhookRequest,
  savedWebhookEndpointSchema,
  type WebhookDeliveriesQuery,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookTestResult,
  webhookDeliverySchema,
  webhookEndpointSchema,
  webhookTestResultSchema,
} from '../schemas/webhooks.ts';

/** A failed core-api call: the server's status, code, message and details, or a transport failure. */
export class CoreApiError extends Error {
  override readonly name = 'CoreApiError';
  /** HTTP status; 0 when no response arrived. */
  readonly status: number;
  /** The server's error code, or `UNREACHABLE`, `TIMEOUT`, `INVALID_RESPONSE` from the client itself. */
  readonly code: string;
  readonly details: ErrorDetails | undefined;
  /** Seconds after which a retry may succeed (429 `Retry-After`), when the server said. */
  readonly retryAfter: number | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    details?: ErrorDetails,
    options?: ErrorOptions & { retryAfter?: number | undefined },
  ) {
    super(message, options);
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfter = options?.retryAfter;
  }
}

export interface AdminClientOptions {
  /** Where core-api listens, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  adminToken: string;
  fetch?: typeof fetch;
  /** Per-request limit; 30 s when absent. */
  timeoutMs?: number;
}

/** Typed calls to the `/admin` endpoints. */
export interface AdminClient {
  /** Creates an agent key (docs/agent-api.md, "Keys"); the secret is in the answer only this once. */
  createAgentKey(input: CreateAgentKeyRequest): Promise<CreatedAgentKey>;
  /** Every agent key, revoked ones included, never with its secret. */
  listAgentKeys(): Promise<AgentKey[]>;
  /** Revokes an agent key: its signatures are refused from now on. */
  revokeAgentKey(keyId: string): Promise<{ keyId: string; revoked: boolean }>;
  /** Growth leads from the agent API's `request_growth_info`, newest first (docs/agent-api/growth.md). */
  listGrowthLeads(query?: { limit?: number; since?: string }): Promise<GrowthLead[]>;
  /** Creates a brand (with the default rules); the keys in the answer are shown only this once. */
  createBrand(input: CreateBrandInput): Promise<CreatedBrand>;
  listBrands(): Promise<Brand[]>;
  getBrand(brandId: string): Promise<Brand>;
  updateBrand(brandId: string, input: UpdateBrandInput): Promise<Brand>;
  /** Takes a domain out of the brand's verified domains (`pts brand remove-domain`). */
  removeBrandDomain(brandId: string, domain: string): Promise<Brand>;
  /** Invites a person into a brand's portal (`pts portal invite`); the answer carries the single-use link. */
  invitePortalMember(input: { brandId: string; email: string; role: PortalRole }): Promise<PortalInvite>;
  /** The portal's manual award from the admin API (`pts member award`): pts with the reason why. */
  awardMember(brandId: string, input: AdminManualAwardRequest): Promise<ManualAwardResponse>;
  /** The portal's manual deduction from the admin API (`pts member deduct`): pts taken back with the reason why. */
  deductMember(brandId: string, input: AdminMemberDeductionRequest): Promise<MemberDeductionResponse>;
  /** Reverses an event's reward in full or in part (`pts reversal create`; docs/shop-program.md). */
  reverseEvent(brandId: string, input: AdminReversalRequest): Promise<ReversalResponse>;
  /** The brand's VIP tier table (`pts tiers show`; docs/tiers.md). */
  getTiers(brandId: string): Promise<TiersResponse>;
  /** Replaces the brand's VIP tier table (`pts tiers set`). */
  setTiers(brandId: string, input: SetTiersRequest): Promise<TiersResponse>;
  /** The brand's referral program (`pts referrals show`; docs/referrals.md). */
  getReferrals(brandId: string): Promise<ReferralProgramResponse>;
  /** Replaces the brand's referral program (`pts referrals set`). */
  setReferrals(brandId: string, input: SetReferralProgramRequest): Promise<ReferralProgramResponse>;
  /** The brand's referral figures (`pts referrals show`). */
  getReferralStats(brandId: string): Promise<ReferralStatsResponse>;
  /** The what-if simulator (`pts simulate`; docs/simulator.md): the window replayed under a proposal. */
  simulate(brandId: string, input: SimulateRequest): Promise<Simulation>;
  /** Invites a person to operate the platform in the portal (`pts portal invite --operator`). */
  invitePortalOperator(input: { email: string }): Promise<PortalOperatorInvite>;
  /** New security key and API key (shown this once); the old security key verifies for `graceMinutes`. */
  rotateBrandKeys(brandId: string, input: RotateBrandKeysRequest): Promise<RotatedBrandKeys>;
  /** Ends the grace of the security key the last rotation replaced (409 when none is still verifying). */
  endPreviousBrandKey(brandId: string): Promise<EndedPreviousBrandKey>;
  /** Creates or replaces the brand's rule for an event type. */
  setRule(brandId: string, eventType: string, settings: SetRuleRequest): Promise<Rule>;
  listRules(brandId: string): Promise<Rule[]>;
  /** Archives (true) or restores (false) a rule: archived, its events are refused (RULE_ARCHIVED); restored, it is paused. */
  archiveRule(brandId: string, eventType: string, archived: boolean): Promise<Rule>;
  /** Sets the brand's webhook URL; `secret` is in the answer only when one was issued (new or rotated). */
  setWebhook(brandId: string, input: SetWebhookRequest): Promise<SavedWebhookEndpoint>;
  getWebhook(brandId: string): Promise<WebhookEndpoint>;
  /** Connects the brand's Shopify shop (docs/shop-program.md, "Shopify"); the secret is never answered. */
  connectShopify(brandId: string, input: ShopifyConnectRequest): Promise<ShopifyConnection>;
  /** The brand's Shopify connection (null when none), its webhook address and last deliveries. */
  getShopify(brandId: string): Promise<ShopifyIntegration>;
  /** `DELETE /admin/brands/:brandId/shopify`: disconnects the shop; later deliveries answer 404. */
  disconnectShopify(brandId: string): Promise<ShopifyDisconnectResponse>;
  deleteWebhook(brandId: string): Promise<void>;
  /** Sends a `webhook.test` event now and reports the receiver's answer. */
  testWebhook(brandId: string): Promise<WebhookTestResult>;
  listWebhookDeliveries(brandId: string, query?: WebhookDeliveriesQuery): Promise<WebhookDelivery[]>;
  /** Re-queues a delivery (dead ones included). */
  replayWebhookDelivery(deliveryId: string): Promise<WebhookDelivery>;
  /** The brand's token purchases (newest first) with totals: USD paid, tokens bought, minted, confirmed. */
  listPurchases(brandId: string): Promise<BrandPurchases>;
  /** An access token for the user with this email (user and wallet created when absent). */
  issueUserToken(email: string): Promise<IssuedUserToken>;
  /** Creates a perk and its PerkNFT collection (waits for the receipt); repeating a half-done create finishes it. */
  createPerk(input: CreatePerkRequest): Promise<Perk>;
  updatePerk(perkId: number, input: UpdatePerkRequest): Promise<Perk>;
  /** Archives (true) or restores (false) a perk: archived, it is in no catalogue and cannot be redeemed. */
  archivePerk(perkId: number, archived: boolean): Promise<Perk>;
  /** Perks, one brand's when `brandId` is given. */
  listPerks(brandId?: string): Promise<Perk[]>;
  addPerkConstraint(perkId: number, input: AddConstraintRequest): Promise<PerkConstraint>;
  listPerkConstraints(perkId: number): Promise<PerkConstraint[]>;
  removePerkConstraint(perkId: number, constraintId: string): Promise<void>;
  /** Gas the relayer paid, per brand (one brand's when given), with the total. */
  relayerGas(brandId?: string): Promise<RelayerGasResponse>;
  /** Creates a hashtag campaign for the brand. */
  createCampaign(brandId: string, input: CreateCampaignRequest): Promise<Campaign>;
  listCampaigns(brandId: string): Promise<Campaign[]>;
  updateCampaign(brandId: string, campaignId: string, input: UpdateCampaignRequest): Promise<Campaign>;
  /** The brand's drops, newest first. */
  listDrops(brandId: string): Promise<Drop[]>;
  /** Changes a drop where it is safe (docs/portal.md, "Changing a drop"). */
  updateDrop(brandId: string, dropId: string, input: UpdateDropRequest): Promise<Drop>;
  /** Ends a drop now. */
  endDrop(brandId: string, dropId: string): Promise<Drop>;
  /** Takes the operator flag away (`pts portal remove-operator`) and revokes pending operator invites. */
  removePortalOperator(input: { email: string }): Promise<PortalOperatorRemoval>;
}

const brandEnvelope = z.object({ success: z.literal(true), brand: brandSchema });
const createdBrandEnvelope = z.object({ success: z.literal(true), brand: createdBrandSchema });
const rotatedKeysEnvelope = z.object({ success: z.literal(true), keys: rotatedBrandKeysSchema });
const endedKeyEnvelope = z.object({ success: z.literal(true), keys: endedPreviousBrandKeySchema });
const brandsEnvelope = z.object({ success: z.literal(true), brands: z.array(brandSchema) });
const ruleEnvelope = z.object({ success: z.literal(true), rule: ruleSchema });
const rulesEnvelope = z.object({ success: z.literal(true), rules: z.array(ruleSchema) });
const savedWebhookEnvelope = z.object({ success: z.literal(true), webhook: savedWebhookEndpointSchema });
const webhookEnvelope = z.object({ success: z.literal(true), webhook: webhookEndpointSchema });
const successEnvelope = z.object({ success: z.literal(true) });
const webhookTestEnvelope = z.object({ success: z.literal(true), result: webhookTestResultSchema });
const deliveriesEnvelope = z.object({ success: z.literal(true), deliveries: z.array(webhookDeliverySchema) });
const deliveryEnvelope = z.object({ success: z.literal(true), delivery: webhookDeliverySchema });
const errorBody = z.object({
  error: z.string(),
  code: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** A client for the admin endpoints; every failure is thrown as a `CoreApiError`. */
export function createAdminClient(options: AdminClientOptions): AdminClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;

  async function call<T extends z.ZodType>(
    method: string,
    path: string,
    schema: T,
    body?: unknown,
  ): Promise<z.output<T>> {
    const url = `${baseUrl}/admin${path}`;
    const headers: Record<string, string> = { authorization: `Bearer ${options.adminToken}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      response = await fetchImpl(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      if (error instanceof Error && error.name === 'TimeoutError') {
        throw new CoreApiError(0, 'TIMEOUT', `No answer from ${baseUrl} within ${timeoutMs} ms`, undefined, {
          cause: error,
        });
      }
      const reason = error instanceof Error ? (describeCause(error) ?? error.message) : String(error);
      throw new CoreApiError(0, 'UNREACHABLE', `Cannot reach ${baseUrl}: ${reason}`, { reason }, { cause: error });
    }
    const json = parseJson(text);
    if (!response.ok) {
      const parsed = errorBody.safeParse(json);
      if (parsed.success) {
        throw new CoreApiError(
          response.status,
          parsed.data.code ?? `HTTP_${response.status}`,
          parsed.data.error,
          parsed.data.details as ErrorDetails | undefined,
        );
      }
      throw new CoreApiError(
        response.status,
        `HTTP_${response.status}`,
        `${method} ${url} answered ${response.status} ${response.statusText}`.trim(),
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new CoreApiError(
        response.status,
        'INVALID_RESPONSE',
        `${method} ${url} answered with an unexpected body; is ${baseUrl} a pts core-api?`,
        { errors: parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`) },
      );
    }
    return parsed.data;
  }

  const brandPath = (brandId: string) => `/brands/${encodeURIComponent(brandId)}`;

  return {
    createAgentKey: async (input) => call('POST', '/agent-keys', createdAgentKeySchema, input),
    listAgentKeys: async () => (await call('GET', '/agent-keys', agentKeyListSchema)).agentKeys,
    revokeAgentKey: async (keyId) =>
      call('POST', `/agent-keys/${encodeURIComponent(keyId)}/revoke`, revokedAgentKeySchema, {}),
    listGrowthLeads: async (query = {}) => {
      const params = new URLSearchParams();
      if (query.limit !== undefined) params.set('limit', String(query.limit));
      if (query.since) params.set('since', query.since);
      const search = params.size > 0 ? `?${params}` : '';
      return (await call('GET', `/growth-leads${search}`, growthLeadListSchema)).leads;
    },
    createBrand: async (input) => (await call('POST', '/brands', createdBrandEnvelope, input)).brand,
    listBrands: async () => (await call('GET', '/brands', brandsEnvelope)).brands,
    getBrand: async (brandId) => (await call('GET', brandPath(brandId), brandEnvelope)).brand,
    updateBrand: async (brandId, input) => (await call('PATCH', brandPath(brandId), brandEnvelope, input)).brand,
    removeBrandDomain: async (brandId, domain) =>
      (await call('DELETE', `${brandPath(brandId)}/domains/${encodeURIComponent(domain)}`, brandEnvelope)).brand,
    rotateBrandKeys: async (brandId, input) =>
      (await call('POST', `${brandPath(brandId)}/keys/rotate`, rotatedKeysEnvelope, input)).keys,
    endPreviousBrandKey: async (brandId) =>
      (await call('POST', `${brandPath(brandId)}/keys/end-previous`, endedKeyEnvelope)).keys,
    setRule: async (brandId, eventType, settings) =>
      (await call('PUT', `${brandPath(brandId)}/rules/${encodeURIComponent(eventType)}`, ruleEnvelope, settings)).rule,
    listRules: async (brandId) => (await call('GET', `${brandPath(brandId)}/rules`, rulesEnvelope)).rules,
    archiveRule: async (brandId, eventType, archived) =>
      (
        await call(
          'POST',
          `${brandPath(brandId)}/rules/${encodeURIComponent(eventType)}/${archived ? 'archive' : 'restore'}`,
          ruleEnvelope,
          {},
        )
      ).rule,
    setWebhook: async (brandId, input) =>
      (await call('PUT', `${brandPath(brandId)}/webhook`, savedWebhookEnvelope, input)).webhook,
    getWebhook: async (brandId) => (await call('GET', `${brandPath(brandId)}/webhook`, webhookEnvelope)).webhook,
    connectShopify: async (brandId, input) =>
      (await call('PUT', `${brandPath(brandId)}/shopify`, shopifyConnectResponseSchema, input)).connection,
    getShopify: (brandId) => call('GET', `${brandPath(brandId)}/shopify`, shopifyIntegrationSchema),
    disconnectShopify: (brandId) => call('DELETE', `${brandPath(brandId)}/shopify`, shopifyDisconnectResponseSchema),
    deleteWebhook: async (brandId) => {
      await call('DELETE', `${brandPath(brandId)}/webhook`, successEnvelope);
    },
    testWebhook: async (brandId) =>
      (await call('POST', `${brandPath(brandId)}/webhook/test`, webhookTestEnvelope)).result,
    listWebhookDeliveries: async (brandId, query = {}) => {
      const params = new URLSearchParams();
      if (query.status) params.set('status', query.status);
      if (query.limit !== undefined) params.set('limit', String(query.limit));
      const search = params.size > 0 ? `?${params}` : '';
      return (await call('GET', `${brandPath(brandId)}/webhook/deliveries${search}`, deliveriesEnvelope)).deliveries;
    },
    replayWebhookDelivery: async (deliveryId) =>
      (await call('POST', `/webhook-deliveries/${encodeURIComponent(deliveryId)}/replay`, deliveryEnvelope)).delivery,
    listPurchases: (brandId) => call('GET', `${brandPath(brandId)}/purchases`, brandPurchasesResponseSchema),
    issueUserToken: async (email) => {
      const { token, walletAddress, expiresAt } = await call('POST', '/users/token', issueUserTokenResponseSchema, {
        email,
      });
      return { token, walletAddress, expiresAt };
    },
    createPerk: async (input) => (await call('POST', '/perks', perkResponseSchema, input)).perk,
    updatePerk: async (perkId, input) => (await call('PATCH', `/perks/${perkId}`, perkResponseSchema, input)).perk,
    archivePerk: async (perkId, archived) =>
      (await call('POST', `/perks/${perkId}/${archived ? 'archive' : 'restore'}`, perkResponseSchema, {})).perk,
    listPerks: async (brandId) =>
      (await call('GET', `/perks${brandId ? `?brand=${encodeURIComponent(brandId)}` : ''}`, perksResponseSchema)).perks,
    addPerkConstraint: async (perkId, input) =>
      (await call('POST', `/perks/${perkId}/constraints`, perkConstraintResponseSchema, input)).constraint,
    listPerkConstraints: async (perkId) =>
      (await call('GET', `/perks/${perkId}/constraints`, perkConstraintsResponseSchema)).constraints,
    removePerkConstraint: async (perkId, constraintId) => {
      await call('DELETE', `/perks/${perkId}/constraints/${encodeURIComponent(constraintId)}`, successEnvelope);
    },
    invitePortalMember: (input) => call('POST', '/portal/invites', portalInviteSchema, input),
    awardMember: (brandId, input) => call('POST', `${brandPath(brandId)}/awards`, manualAwardResponseSchema, input),
    deductMember: (brandId, input) =>
      call('POST', `${brandPath(brandId)}/deductions`, memberDeductionResponseSchema, input),
    reverseEvent: (brandId, input) => call('POST', `${brandPath(brandId)}/reversals`, reversalResponseSchema, input),
    getTiers: (brandId) => call('GET', `${brandPath(brandId)}/tiers`, tiersResponseSchema),
    setTiers: (brandId, input) => call('PUT', `${brandPath(brandId)}/tiers`, tiersResponseSchema, input),
    getReferrals: (brandId) => call('GET', `${brandPath(brandId)}/referrals`, referralProgramResponseSchema),
    setReferrals: (brandId, input) =>
      call('PUT', `${brandPath(brandId)}/referrals`, referralProgramResponseSchema, input),
    getReferralStats: (brandId) => call('GET', `${brandPath(brandId)}/referrals/stats`, referralStatsResponseSchema),
    simulate: (brandId, input) => call('POST', `${brandPath(brandId)}/simulate`, simulationSchema, input),
    invitePortalOperator: (input) => call('POST', '/portal/operator-invites', portalOperatorInviteSchema, input),
    removePortalOperator: (input) => call('POST', '/portal/operators/remove', portalOperatorRemovalSchema, input),
    listDrops: async (brandId) => (await call('GET', `${brandPath(brandId)}/drops`, dropsResponseSchema)).drops,
    updateDrop: async (brandId, dropId, input) =>
      (
        await call(
          'PATCH',
          `${brandPath(brandId)}/drops/${encodeURIComponent(dropId)}`,
          createDropResponseSchema,
          input,
        )
      ).drop,
    endDrop: async (brandId, dropId) =>
      (await call('POST', `${brandPath(brandId)}/drops/${encodeURIComponent(dropId)}/end`, createDropResponseSchema))
        .drop,
    relayerGas: (brandId) =>
      call('GET', `/relayer/gas${brandId ? `?brand=${encodeURIComponent(brandId)}` : ''}`, relayerGasResponseSchema),
    createCampaign: async (brandId, input) =>
      (await call('POST', `${brandPath(brandId)}/campaigns`, campaignResponseSchema, input)).campaign,
    listCampaigns: async (brandId) =>
      (await call('GET', `${brandPath(brandId)}/campaigns`, campaignsResponseSchema)).campaigns,
    updateCampaign: async (brandId, campaignId, input) =>
      (
        await call(
          'PATCH',
          `${brandPath(brandId)}/campaigns/${encodeURIComponent(campaignId)}`,
          campaignResponseSchema,
          input,
        )
      ).campaign,
  };
}

/** The body as JSON, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Node's fetch hides the socket error (ECONNREFUSED …) in `cause`. */
export function describeCause(error: Error): string | undefined {
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  if (!cause) return undefined;
  if (typeof cause.code === 'string') return cause.code;
  return typeof cause.message === 'string' ? cause.message : undefined;
}
