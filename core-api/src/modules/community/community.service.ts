import {
  AppError,
  type Campaign,
  type ChatGroup,
  type Clock,
  type CreateCampaignRequest,
  type UpdateCampaignRequest,
} from '@pts/shared';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import type { ChangeNotifier } from '../brands/brand-changes.ts';
import { verifySecurityKey } from '../brands/brand-keys.service.ts';
import { getBrand } from '../brands/brands.service.ts';
import {
  activeCampaigns,
  campaignsOverlapping,
  createCampaign,
  endCampaign,
  getCampaign,
  listCampaigns,
  updateCampaign,
} from './campaigns.service.ts';
import {
  type ChatGroupSetupInput,
  chatGroupBrand,
  deactivateChatGroup,
  getChatGroup,
  listBrandChatGroups,
  setupChatGroup,
  updateChatGroup,
} from './chat-groups.service.ts';

/**
 * Who the audit log names for one change: a portal user (`portal:<email>`); the default otherwise. With
 * `brandId` (the brand portal), a chat group linked to another brand answers NOT_FOUND, as an unknown one.
 */
export type CommunityScope = { actor?: string | undefined; brandId?: string | undefined };

/**
 * Chat groups and hashtag campaigns (`/services/chat-groups`, `/services/campaigns`, `/services/x-bot`, the
 * admin API's campaigns and the brand portal's): chat group changes are the bots' (audited as `brand-key`),
 * campaign changes the admin's (audited as `admin`), unless a call names its actor (the portal user).
 */
export interface CommunityService {
  /** Whether `key` is one of the brand's security keys valid now (the bots' `/setup`). */
  verifySecurityKey(brandId: string, key: string): Promise<boolean>;
  /** The brand a chat group belongs to, if the group exists. */
  chatGroupBrand(chatGroupId: string): Promise<string | undefined>;
  setupChatGroup(input: ChatGroupSetupInput): ReturnType<typeof setupChatGroup>;
  getChatGroup(chatGroupId: string): Promise<ChatGroup>;
  /** The chat groups linked to the brand. */
  listChatGroups(brandId: string): Promise<ChatGroup[]>;
  /** Name, configuration (a changed reward or cooldown is written to the rule). */
  updateChatGroup(
    chatGroupId: string,
    input: Parameters<typeof updateChatGroup>[2],
    options?: CommunityScope,
  ): ReturnType<typeof updateChatGroup>;
  /** Unlinks the group from its brand (a later `/setup` links it again). */
  deactivateChatGroup(chatGroupId: string, options?: CommunityScope): Promise<ChatGroup>;
  /** Hashtag campaigns active at `at`. */
  activeCampaigns(brandId: string, at: Date): Promise<Campaign[]>;
  /** The X bot's settings: the brand's X handle and its campaigns overlapping [since, at]; BRAND_NOT_FOUND. */
  xBotSettings(
    brandId: string,
    since: Date,
    at: Date,
  ): Promise<{ brandId: string; xHandle: string | null; campaigns: Campaign[] }>;
  createCampaign(
    brandId: string,
    input: CreateCampaignRequest,
    options?: Pick<CommunityScope, 'actor'>,
  ): Promise<Campaign>;
  /** Newest start first. */
  listCampaigns(brandId: string): Promise<Campaign[]>;
  getCampaign(brandId: string, campaignId: string): Promise<Campaign>;
  updateCampaign(
    brandId: string,
    campaignId: string,
    input: UpdateCampaignRequest,
    options?: Pick<CommunityScope, 'actor'>,
  ): Promise<Campaign>;
  /** Ends the campaign now by the server's clock; 409 once it has ended. */
  endCampaign(brandId: string, campaignId: string, options?: Pick<CommunityScope, 'actor'>): Promise<Campaign>;
}

export function createCommunityService(deps: {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  /** Chat group settings write the brand's rules: every rule cache hears of it. */
  changes: ChangeNotifier;
}): CommunityService {
  const as = (options: CommunityScope = {}) => (options.actor === undefined ? deps : { ...deps, actor: options.actor });
  /** NOT_FOUND unless the group is linked to `brandId` (when given). */
  const inBrand = async (chatGroupId: string, brandId: string | undefined) => {
    if (brandId === undefined) return;
    if ((await chatGroupBrand(deps.db, chatGroupId)) !== brandId.toLowerCase()) {
      throw new AppError('NOT_FOUND', `No chat group ${chatGroupId} is linked to this brand`, {
        field: 'chatGroupId',
        value: chatGroupId,
      });
    }
  };
  return {
    verifySecurityKey: (brandId, key) => verifySecurityKey(deps, brandId, key),
    chatGroupBrand: (chatGroupId) => chatGroupBrand(deps.db, chatGroupId),
    setupChatGroup: (input) => setupChatGroup(deps, input),
    getChatGroup: (chatGroupId) => getChatGroup(deps, chatGroupId),
    listChatGroups: (brandId) => listBrandChatGroups(deps.db, brandId),
    async updateChatGroup(chatGroupId, input, options = {}) {
      await inBrand(chatGroupId, options.brandId);
      return updateChatGroup(as(options), chatGroupId, input);
    },
    async deactivateChatGroup(chatGroupId, options = {}) {
      await inBrand(chatGroupId, options.brandId);
      return deactivateChatGroup(as(options), chatGroupId);
    },
    activeCampaigns: (brandId, at) => activeCampaigns(deps, brandId, at),
    xBotSettings: async (brandId, since, at) => {
      const brand = await getBrand(deps, brandId);
      const campaigns = await campaignsOverlapping(deps, brandId, since, at);
      return { brandId: brand.brandId, xHandle: brand.xHandle, campaigns };
    },
    createCampaign: (brandId, input, options) => createCampaign(as(options), brandId, input),
    listCampaigns: (brandId) => listCampaigns(deps, brandId),
    getCampaign: (brandId, campaignId) => getCampaign(deps, brandId, campaignId),
    updateCampaign: (brandId, campaignId, input, options) => updateCampaign(as(options), brandId, campaignId, input),
    endCampaign: (brandId, campaignId, options) => endCampaign(as(options), brandId, campaignId),
  };
}
