import { brandIdSchema, type ChatGroupConfigPatch, CoreApiError } from '@pts/shared';
import { z } from 'zod';
import { groupContext, identityOf } from './context.ts';
import { GROUP_ONLY } from './replies.ts';
import type { Command } from './types.ts';
import { defineCommand } from './user-commands.ts';

/** The event type `/reward` sends (the brand's rule of that name decides the amount; docs/bots.md). */
export const MANUAL_REWARD_EVENT = 'chat_manual_reward';

export const setupCommand = defineCommand({
  name: 'setup',
  aliases: [],
  description: 'Link this group to a brand: /setup <brand_id> <security_key> (admins)',
  argNames: ['brandId', 'securityKey'],
  adminOnly: true,
  sensitiveArgs: true,
  args: z.object({
    brandId: brandIdSchema,
    securityKey: z.string({ message: 'give the security key: /setup <brand_id> <security_key>' }).min(1).max(200),
  }),
  async run(input, deps) {
    const { place, user, args } = input;
    if (place.groupId === null) return GROUP_ONLY;
    const credentials = { brandId: args.brandId, securityKey: args.securityKey };
    try {
      const result = await deps.coreClient(credentials).chatGroupSetup({
        securityKey: args.securityKey,
        platform: place.platform,
        chatGroupId: place.groupId,
        groupName: place.groupName ?? place.groupId,
        setupBy: `${place.platform}:${user.id}`,
      });
      await deps.groups.set(place.platform, place.groupId, credentials);
      const config = result.chatGroup.configMetadata;
      return {
        text: `${result.created ? 'This group is now linked' : 'This group is linked again'} to brand ${args.brandId}. Members can use /daily, /streak, /perks and /help.`,
        fields: [
          { name: 'Daily reward', value: `${config.dailyReward} pts`, inline: true },
          { name: 'Welcome bonus', value: `${config.welcomeBonus} pts`, inline: true },
          {
            name: 'Greetings',
            value: config.naturalParticipation.enabled
              ? `good morning ${config.naturalParticipation.gmReward} pts / ${config.naturalParticipation.gmCooldownHours} h, good night ${config.naturalParticipation.gnReward} pts / ${config.naturalParticipation.gnCooldownHours} h`
              : 'off',
          },
        ],
      };
    } catch (error) {
      if (error instanceof CoreApiError && (error.code === 'UNAUTHORIZED' || error.status === 401)) {
        return { text: 'Setup failed: the brand id or the security key is wrong. Check both and try again.' };
      }
      throw error;
    }
  },
});

/** `/config` keys an admin may change, and where they live in the group configuration. */
const CONFIG_KEYS: Record<string, (value: number | boolean) => ChatGroupConfigPatch> = {
  daily: (v) => ({ dailyReward: v as number }),
  welcome: (v) => ({ welcomeBonus: v as number }),
  welcome_message: (v) => ({ welcomeMessageEnabled: v as boolean }),
  greetings: (v) => ({ naturalParticipation: { enabled: v as boolean } }),
  gm: (v) => ({ naturalParticipation: { gmReward: v as number } }),
  gn: (v) => ({ naturalParticipation: { gnReward: v as number } }),
  gm_cooldown: (v) => ({ naturalParticipation: { gmCooldownHours: v as number } }),
  gn_cooldown: (v) => ({ naturalParticipation: { gnCooldownHours: v as number } }),
  gm_reply: (v) => ({ naturalParticipation: { gmResponseEnabled: v as boolean } }),
  gn_reply: (v) => ({ naturalParticipation: { gnResponseEnabled: v as boolean } }),
};
const BOOLEAN_KEYS = new Set(['welcome_message', 'greetings', 'gm_reply', 'gn_reply']);

export const configCommand = defineCommand({
  name: 'config',
  aliases: [],
  description: `Show or change the group configuration: /config [${Object.keys(CONFIG_KEYS).join('|')} <value>] (admins)`,
  argNames: ['key', 'value'],
  adminOnly: true,
  args: z
    .object({
      key: z
        .enum(Object.keys(CONFIG_KEYS) as [string, ...string[]], {
          message: `key must be one of ${Object.keys(CONFIG_KEYS).join(', ')}`,
        })
        .optional(),
      value: z.string().optional(),
    })
    .refine((a) => (a.key === undefined) === (a.value === undefined), {
      message: 'give a key and a value, e.g. /config daily 20',
    }),
  run: async (input, deps) => {
    const ctx = await groupContext(input.user, input.place, deps);
    if ('reply' in ctx) return ctx.reply;
    let group = await ctx.client.chatGroupGet(ctx.chatGroupId);
    const { key, value } = input.args;
    if (key !== undefined && value !== undefined) {
      let parsed: number | boolean;
      if (BOOLEAN_KEYS.has(key)) {
        if (!['on', 'off', 'true', 'false'].includes(value.toLowerCase())) return { text: `${key} takes on or off.` };
        parsed = ['on', 'true'].includes(value.toLowerCase());
      } else {
        if (!/^\d{1,7}$/.test(value)) return { text: `${key} takes a whole number, e.g. /config ${key} 20.` };
        parsed = Number(value);
      }
      group = await ctx.client.chatGroupUpdate(ctx.chatGroupId, { configMetadata: CONFIG_KEYS[key]!(parsed) });
    }
    const c = group.configMetadata;
    const np = c.naturalParticipation;
    const onOff = (b: boolean) => (b ? 'on' : 'off');
    return {
      title: key ? `Updated ${key}` : 'Group configuration',
      text: `Brand ${group.brandId}. Change a value with /config <key> <value>.`,
      fields: [
        { name: 'daily', value: `${c.dailyReward} pts`, inline: true },
        { name: 'welcome', value: `${c.welcomeBonus} pts`, inline: true },
        { name: 'welcome_message', value: onOff(c.welcomeMessageEnabled), inline: true },
        { name: 'greetings', value: onOff(np.enabled), inline: true },
        {
          name: 'gm / gm_cooldown / gm_reply',
          value: `${np.gmReward} pts / ${np.gmCooldownHours} h / ${onOff(np.gmResponseEnabled)}`,
        },
        {
          name: 'gn / gn_cooldown / gn_reply',
          value: `${np.gnReward} pts / ${np.gnCooldownHours} h / ${onOff(np.gnResponseEnabled)}`,
        },
      ],
      ephemeral: true,
    };
  },
});

export const rewardCommand = defineCommand({
  name: 'reward',
  aliases: [],
  description: 'Reward a member: /reward <@user or id> <amount> (admins; pays the brand rule chat_manual_reward)',
  argNames: ['user', 'amount'],
  adminOnly: true,
  args: z.object({
    user: z.string({ message: 'name the member: /reward <@user or id> <amount>' }).min(1),
    amount: z.coerce
      .number({ message: 'give an amount: /reward <@user or id> <amount>' })
      .int('the amount is a whole number')
      .min(1, 'the amount must be at least 1'),
  }),
  run: async (input, deps) => {
    const ctx = await groupContext(input.user, input.place, deps);
    if ('reply' in ctx) return ctx.reply;
    const reference = input.args.user;
    const mention = /^<@!?(\d+)>$/.exec(reference)?.[1];
    const targetId = /^\d{1,32}$/.test(reference)
      ? reference
      : (mention ?? (input.resolveUser ? await input.resolveUser(reference) : undefined));
    if (!targetId) {
      return {
        text: `I do not know who ${reference} is: use their numeric user id, or mention a member who has written in this group.`,
      };
    }
    const config = await ctx.client.eventConfig();
    const rule = config.events.find((e) => e.eventType === MANUAL_REWARD_EVENT);
    if (!rule) {
      return {
        text: `The brand has no "${MANUAL_REWARD_EVENT}" rule, so manual rewards are off. The brand owner creates it (reward amount, max total) in pts; see docs/bots.md.`,
      };
    }
    const target = identityOf({ platform: input.user.platform, id: targetId }, deps);
    const result = await ctx.client.manualEvent({
      eventType: MANUAL_REWARD_EVENT,
      userEmail: target,
      metadata: {
        source: 'chat_manual_reward',
        rewardedBy: identityOf(input.user, deps),
        requestedAmount: input.args.amount,
      },
      ...(input.place.channelId ? { channel_id: input.place.channelId } : {}),
    });
    const note =
      result.rewardAmount === input.args.amount
        ? ''
        : ` (pts pays the amount of the brand's ${MANUAL_REWARD_EVENT} rule, not the ${input.args.amount} asked for)`;
    return { text: `Rewarded ${reference} with ${result.rewardAmount} pts${note}.` };
  },
});

export const ADMIN_COMMANDS: readonly Command[] = [setupCommand, configCommand, rewardCommand] as unknown as Command[];
