import type { Campaign, ChatGroup, Clock, CreateCampaignRequest, UpdateCampaignRequest } from '@pts/shared';
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
  getCampaign,
  listCampaigns,
  updateCampaign,
} from './campaigns.service.ts';
import {
  type ChatGroupSetupInput,
  chatGroupBrand,
  deactivateChatGroup,
  getChatGroup,
  setupChatGroup,
  updateChatGroup,
} from './chat-groups.service.ts';

/**
 * Chat groups and hashtag campaigns (`/services/chat-groups`, `/services/campaigns`, `/services/x-bot`, and the
 * admin API's campaigns): chat group changes are the bots' (audited as `brand-key`), campaign changes the
 * admin's (audited as `admin`).
 */
export interface CommunityService {
  /** Whether `key` is one of the brand's security keys valid now (the bots' `/setup`). */
  verifySecurityKey(brandId: string, key: string): Promise<boolean>;
  /** The brand a chat group belongs to, if the group exists. */
  chatGroupBrand(chatGroupId: string): Promise<string | undefined>;
  setupChatGroup(input: ChatGroupSetupInput): ReturnType<typeof setupChatGroup>;
  getChatGroup(chatGroupId: string): Promise<ChatGroup>;
  updateChatGroup(
    chatGroupId: string,
    input: Parameters<typeof updateChatGroup>[2],
  ): ReturnType<typeof updateChatGroup>;
  deactivateChatGroup(chatGroupId: string): Promise<ChatGroup>;
  /** Hashtag campaigns active at `at`. */
  activeCampaigns(brandId: string, at: Date): Promise<Campaign[]>;
  /** The X bot's settings: the brand's X handle and its campaigns overlapping [since, at]; BRAND_NOT_FOUND. */
  xBotSettings(
    brandId: string,
    since: Date,
    at: Date,
  ): Promise<{ brandId: string; xHandle: string | null; campaigns: Campaign[] }>;
  createCampaign(brandId: string, input: CreateCampaignRequest): Promise<Campaign>;
  listCampaigns(brandId: string): Promise<Campaign[]>;
  getCampaign(brandId: string, campaignId: string): Promise<Campaign>;
  updateCampaign(brandId: string, campaignId: string, input: UpdateCampaignRequest): Promise<Campaign>;
}

export function createCommunityService(deps: {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  /** Chat group settings write the brand's rules: every rule cache hears of it. */
  changes: ChangeNotifier;
}): CommunityService {
  return {
    verifySecurityKey: (brandId, key) => verifySecurityKey(deps, brandId, key),
    chatGroupBrand: (chatGroupId) => chatGroupBrand(deps.db, chatGroupId),
    setupChatGroup: (input) => setupChatGroup(deps, input),
    getChatGroup: (chatGroupId) => getChatGroup(deps, chatGroupId),
    updateChatGroup: (chatGroupId, input) => updateChatGroup(deps, chatGroupId, input),
    deactivateChatGroup: (chatGroupId) => deactivateChatGroup(deps, chatGroupId),
    activeCampaigns: (brandId, at) => activeCampaigns(deps, brandId, at),
    xBotSettings: async (brandId, since, at) => {
      const brand = await getBrand(deps, brandId);
      const campaigns = await campaignsOverlapping(deps, brandId, since, at);
      return { brandId: brand.brandId, xHandle: brand.xHandle, campaigns };
    },
    createCampaign: (brandId, input) => createCampaign(deps, brandId, input),
    listCampaigns: (brandId) => listCampaigns(deps, brandId),
    getCampaign: (brandId, campaignId) => getCampaign(deps, brandId, campaignId),
    updateCampaign: (brandId, campaignId, input) => updateCampaign(deps, brandId, campaignId, input),
  };
}
