import { z } from 'zod';
import { WINDOW_STATUSES } from '../rules/windows.ts';
import { brandIdSchema, cleanString } from './common.ts';

/** Largest reward a chat group configuration may set. */
export const COMMUNITY_MAX_REWARD = 1_000_000;
/** Longest cooldown a chat group configuration may set (one year). */
export const COMMUNITY_MAX_COOLDOWN_HOURS = 8760;

const rewardSchema = z
  .number()
  .int('must be a whole number')
  .min(0, 'must be at least 0')
  .max(COMMUNITY_MAX_REWARD, `must be at most ${COMMUNITY_MAX_REWARD}`);
const cooldownSchema = z
  .number()
  .int('must be a whole number of hours')
  .min(0, 'must be at least 0')
  .max(COMMUNITY_MAX_COOLDOWN_HOURS, `must be at most ${COMMUNITY_MAX_COOLDOWN_HOURS}`);

/** Good-morning / good-night rewards of a chat group (spec 2.4 `naturalParticipation`). */
export const naturalParticipationSchema = z.strictObject({
  enabled: z.boolean(),
  gmReward: rewardSchema,
  gnReward: rewardSchema,
  gmCooldownHours: cooldownSchema,
  gnCooldownHours: cooldownSchema,
  gmResponseEnabled: z.boolean(),
  gnResponseEnabled: z.boolean(),
});

/** A chat group's `config_metadata` (spec 2.4). */
export const chatGroupConfigSchema = z
  .strictObject({
    naturalParticipation: naturalParticipationSchema,
    dailyReward: rewardSchema,
    welcomeBonus: rewardSchema,
    welcomeMessageEnabled: z.boolean(),
  })
  .meta({ id: 'ChatGroupConfig' });
export type ChatGroupConfig = z.infer<typeof chatGroupConfigSchema>;

/** The configuration `/setup` gives a new group (spec 2.4 defaults, 4.5). */
export const DEFAULT_CHAT_GROUP_CONFIG: ChatGroupConfig = Object.freeze({
  naturalParticipation: Object.freeze({
    enabled: true,
    gmReward: 25,
    gnReward: 15,
    gmCooldownHours: 24,
    gnCooldownHours: 24,
    gmResponseEnabled: false,
    gnResponseEnabled: false,
  }),
  dailyReward: 10,
  welcomeBonus: 50,
  welcomeMessageEnabled: true,
}) as ChatGroupConfig;

/** A partial configuration, deep-merged into the stored one. */
export const chatGroupConfigPatchSchema = z
  .strictObject({
    naturalParticipation: naturalParticipationSchema.partial().optional(),
    dailyReward: rewardSchema.optional(),
    welcomeBonus: rewardSchema.optional(),
    welcomeMessageEnabled: z.boolean().optional(),
  })
  .meta({ id: 'ChatGroupConfigPatch' });
export type ChatGroupConfigPatch = z.infer<typeof chatGroupConfigPatchSchema>;

/** Chat platforms a group can live on. */
export const CHAT_GROUP_PLATFORMS = ['discord', 'telegram', 'slack', 'matrix'] as const;

/**
 * A chat group id: `<platform>:<platform's group id>`, e.g. `discord:123456789012345678`,
 * `telegram:-1001234567890`. The platform prefix keeps ids of different platforms apart.
 */
export const CHAT_GROUP_ID_PATTERN = /^(discord|telegram|slack|matrix):[A-Za-z0-9_.@!:-]{1,100}$/;
export const chatGroupIdSchema = cleanString(
  z
    .string()
    .regex(CHAT_GROUP_ID_PATTERN, `must be <platform>:<group id>, platform one of ${CHAT_GROUP_PLATFORMS.join(', ')}`),
);

/** `POST /services/chat-groups/setup`: the bot's `/setup <brand_id> <security_key>`. */
export const chatGroupSetupRequestSchema = z
  .strictObject({
    brandId: brandIdSchema,
    securityKey: z.string().min(1, 'is required').max(200, 'must be at most 200 characters'),
    platform: z.enum(CHAT_GROUP_PLATFORMS),
    /** The platform's group id (`123…`), or the full `<platform>:<id>`. */
    chatGroupId: cleanString(z.string().min(1, 'is required').max(120, 'must be at most 120 characters')),
    groupName: cleanString(z.string().min(1, 'is required').max(200, 'must be at most 200 characters')),
    /** The admin who ran `/setup` (platform user id or name). */
    setupBy: cleanString(z.string().min(1, 'is required').max(200, 'must be at most 200 characters')),
  })
  .meta({ id: 'ChatGroupSetupRequest' });
export type ChatGroupSetupRequest = z.output<typeof chatGroupSetupRequestSchema>;

export const chatGroupParamsSchema = z.object({ chatGroupId: chatGroupIdSchema });

/** The portal's `…/brands/:brandId/chat-groups/:chatGroupId` routes: one of the brand's groups. */
export const portalChatGroupParamsSchema = z.object({ brandId: brandIdSchema, chatGroupId: chatGroupIdSchema });

/** `PATCH /services/chat-groups/:chatGroupId`. */
export const updateChatGroupRequestSchema = z
  .strictObject({
    groupName: cleanString(z.string().min(1).max(200)).optional(),
    configMetadata: chatGroupConfigPatchSchema.optional(),
  })
  .refine((value) => value.groupName !== undefined || value.configMetadata !== undefined, {
    message: 'give groupName or configMetadata',
  })
  .meta({ id: 'UpdateChatGroupRequest' });
export type UpdateChatGroupRequest = z.output<typeof updateChatGroupRequestSchema>;

/** A chat group configuration record (spec 2.4) as the API shows it. */
export const chatGroupSchema = z
  .object({
    id: z.uuid(),
    chatGroupId: z.string(),
    brandId: z.string(),
    groupName: z.string(),
    isActive: z.boolean(),
    configMetadata: chatGroupConfigSchema,
    setupBy: z.string(),
    setupAt: z.iso.datetime(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'ChatGroup' });
export type ChatGroup = z.infer<typeof chatGroupSchema>;

export const chatGroupResponseSchema = z.object({
  success: z.literal(true),
  chatGroup: chatGroupSchema,
  /** PATCH only: event types whose brand rule took the changed reward or cooldown. */
  rulesUpdated: z.array(z.string()).optional(),
});

export const chatGroupSetupResponseSchema = z
  .object({
    success: z.literal(true),
    chatGroup: chatGroupSchema,
    /** Whether this setup created the record (false: re-linked or repeated). */
    created: z.boolean(),
    /** Event types whose rules this setup created (rules the brand had are left alone). */
    rulesCreated: z.array(z.string()),
  })
  .meta({ id: 'ChatGroupSetupResponse' });
export type ChatGroupSetupResponse = z.infer<typeof chatGroupSetupResponseSchema>;

/** `#` followed by 1 to 100 letters, digits or underscores. */
export const HASHTAG_PATTERN = /^#\w{1,100}$/;
export const hashtagSchema = cleanString(
  z.string().regex(HASHTAG_PATTERN, 'must be # followed by 1 to 100 word characters'),
);

const isoDateSchema = cleanString(z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }));

const campaignFields = {
  hashtag: hashtagSchema,
  /** Fixed reward per counted post. */
  reward: z.number().int('must be a whole number').min(0).max(COMMUNITY_MAX_REWARD).optional(),
  /** Multiplier applied to the base reward of the post event instead (e.g. 2.0). */
  rewardMultiplier: z.number().gt(0, 'must be above 0').max(100, 'must be at most 100').optional(),
  startDate: isoDateSchema,
  endDate: isoDateSchema,
  maxClaimsPerUser: z.number().int().min(1, 'must be at least 1').max(1_000_000).optional(),
  excludeBrandPosts: z.boolean().optional(),
};

/** `POST /admin/brands/:brandId/campaigns`; exactly one of `reward` and `rewardMultiplier`, end after start. */
export const createCampaignRequestSchema = z
  .strictObject(campaignFields)
  .superRefine((value, ctx) => {
    if ((value.reward === undefined) === (value.rewardMultiplier === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['reward'], message: 'give exactly one of reward and rewardMultiplier' });
    }
    if (Date.parse(value.endDate) <= Date.parse(value.startDate)) {
      ctx.addIssue({ code: 'custom', path: ['endDate'], message: 'must be after startDate' });
    }
  })
  .meta({ id: 'CreateCampaignRequest' });
export type CreateCampaignRequest = z.output<typeof createCampaignRequestSchema>;

/** `PATCH /admin/brands/:brandId/campaigns/:campaignId`: any field; the merged campaign is validated again. */
export const updateCampaignRequestSchema = z
  .strictObject({
    ...campaignFields,
    hashtag: hashtagSchema.optional(),
    startDate: isoDateSchema.optional(),
    endDate: isoDateSchema.optional(),
    reward: campaignFields.reward.nullable(),
    rewardMultiplier: campaignFields.rewardMultiplier.nullable(),
  })
  .refine((value) => Object.keys(value).length > 0, { message: 'give at least one field to change' })
  .meta({ id: 'UpdateCampaignRequest' });
export type UpdateCampaignRequest = z.output<typeof updateCampaignRequestSchema>;

/** A hashtag campaign (spec 2.4). */
export const campaignSchema = z
  .object({
    id: z.uuid(),
    brandId: z.string(),
    hashtag: z.string(),
    reward: z.number().int().nullable(),
    rewardMultiplier: z.number().nullable(),
    startDate: z.iso.datetime(),
    endDate: z.iso.datetime(),
    status: z.enum(WINDOW_STATUSES).meta({
      description:
        "Where the posting window stands by the server's clock when it answered: scheduled (before startDate), active, or ended (from endDate on)",
    }),
    maxClaimsPerUser: z.number().int(),
    excludeBrandPosts: z.boolean(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'HashtagCampaign' });
export type Campaign = z.infer<typeof campaignSchema>;

export const campaignParamsSchema = z.object({ brandId: brandIdSchema, campaignId: z.uuid('must be a uuid') });
export const campaignResponseSchema = z.object({ success: z.literal(true), campaign: campaignSchema });
export const campaignsResponseSchema = z.object({ success: z.literal(true), campaigns: z.array(campaignSchema) });

/** `GET /services/campaigns/:brandId/active?at=`. */
export const activeCampaignsQuerySchema = z.object({ at: isoDateSchema.optional() });
export const activeCampaignsResponseSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    at: z.iso.datetime(),
    campaigns: z.array(campaignSchema),
  })
  .meta({ id: 'ActiveCampaignsResponse' });
export type ActiveCampaignsResponse = z.infer<typeof activeCampaignsResponseSchema>;

/** `GET /services/x-bot/:brandId/settings?since=`: what the X bot reads on every poll (brand-signed). */
export const xBotSettingsQuerySchema = z.object({ since: isoDateSchema.optional() });
export const xBotSettingsResponseSchema = z
  .object({
    success: z.literal(true),
    brandId: z.string(),
    /** The brand's X handle without @ (`pts brand set --x-handle`), null when not configured. */
    xHandle: z.string().nullable(),
    at: z.iso.datetime(),
    /** Campaigns whose window overlaps [since, at]: a post counts when it was made inside its window. */
    campaigns: z.array(campaignSchema),
  })
  .meta({ id: 'XBotSettingsResponse' });
export type XBotSettingsResponse = z.infer<typeof xBotSettingsResponseSchema>;
