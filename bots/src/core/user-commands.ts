import { CoreApiError, type MemberTierResponse, parsePlatformIdentity } from '@pts/shared';
import { z } from 'zod';
import { reportMemberRoles } from './chat-roles.ts';
import { groupContext, identityOf, memberMetadata } from './context.ts';
import { formatDuration, rewardRefusedText, secondsUntilUtcMidnight } from './replies.ts';
import type { BotDeps, Command, CommandInput, Reply, ReplyButton } from './types.ts';

/** Declares a command with its argument schema inferred. */
export function defineCommand<Schema extends z.ZodType>(command: Command<Schema>): Command<Schema> {
  return command;
}

const noArgs = z.object({});

/** Runs `body` with the group's context, or answers why it cannot (DM, group not set up). */
async function inGroup(
  input: CommandInput<unknown>,
  deps: BotDeps,
  body: (ctx: Exclude<Awaited<ReturnType<typeof groupContext>>, { reply: Reply }>) => Promise<Reply>,
): Promise<Reply> {
  const ctx = await groupContext(input.user, input.place, deps);
  if ('reply' in ctx) return ctx.reply;
  return body(ctx);
}

/** Claim buttons for unclaimed streak milestones (`milestone:<days>`). */
export function milestoneButtons(milestones: readonly { days: number; bonus: number }[]): ReplyButton[] {
  return milestones.map((m) => ({
    action: `milestone:${m.days}`,
    label: `Claim ${m.days}-day bonus (${m.bonus} pts)`,
    style: 'success' as const,
  }));
}

export const dailyCommand = defineCommand({
  name: 'daily',
  aliases: ['checkin'],
  description: 'Daily check-in reward (resets at midnight UTC)',
  argNames: [],
  args: noArgs,
  run: (input, deps) =>
    inGroup(input, deps, async ({ client, identityKey }) => {
      const result = await client.checkin(identityKey, input.user.platform, memberMetadata(input.user));
      const wait = formatDuration(secondsUntilUtcMidnight(deps.clock.now()));
      const streakLine = `Streak: ${result.streak.currentStreak} day(s), multiplier ×${result.streak.multiplier}`;
      const buttons = milestoneButtons(result.streak.unclaimedMilestones);
      if (result.alreadyClaimed) {
        return {
          text: `You already checked in today. The next check-in opens at midnight UTC (in ${wait}).\n${streakLine}`,
          ephemeral: true,
          ...(buttons.length ? { buttons } : {}),
        };
      }
      if (result.rewardRefused) {
        deps.logger.info(
          { code: result.rewardRefused.code, message: result.rewardRefused.message },
          'check-in reward refused',
        );
        return {
          text: `Checked in, but no reward this time: ${rewardRefusedText(result.rewardRefused.code)}.\n${streakLine}`,
          ...(buttons.length ? { buttons } : {}),
        };
      }
      const next = result.streak.nextMilestone;
      return {
        text: `Checked in: +${result.reward} pts.\n${streakLine}${
          next ? `\nNext milestone: ${next.days} days (+${next.bonus} pts) in ${next.daysRemaining} day(s).` : ''
        }`,
        ...(buttons.length ? { buttons } : {}),
      };
    }),
});

export const balanceCommand = defineCommand({
  name: 'balance',
  aliases: ['pts'],
  description: 'Your pts balance (spendable now) and rewards on their way',
  argNames: [],
  args: noArgs,
  run: (input, deps) =>
    inGroup(input, deps, async ({ client, identityKey }) => {
      // The live on-chain balance of the user's wallet (their account's when linked), plus rewards accepted
      // but not yet confirmed on chain.
      const [balance, tier] = await Promise.all([client.balance(identityKey), client.tier(identityKey)]);
      // The member's VIP tier, when the brand has tiers (docs/tiers.md).
      const tierLine = tier.tier === null ? '' : `\nTier: ${tier.tier}${tierNextText(tier)}`;
      if (!balance.walletAddress) {
        return { text: `You have no pts yet: run /daily to earn your first ones.${tierLine}`, ephemeral: true };
      }
      // The figures every surface shows (docs/ledger.md): spendable = on chain less perks being redeemed.
      const { spendable, pending, reserved } = balance.figures;
      return {
        text: `You have ${spendable} pts to spend.${
          reserved > 0 ? ` ${reserved} are held for a perk being redeemed.` : ''
        }${pending > 0 ? ` ${pending} more are on their way (confirming on chain).` : ''}${tierLine}`,
        ephemeral: true,
      };
    }),
});

const PERIOD_TEXT: Record<string, string> = {
  rolling_365: 'over the last 365 days',
  calendar_year: 'this calendar year',
  lifetime: 'since joining',
};

/** What is left to the next tier: pts to earn (basis `earned`) or an amount to spend (`spent`). */
function leftText(tier: MemberTierResponse, amount: string): string {
  return tier.progress.basis === 'spent' ? `${amount} more spent` : `${amount} more pts earned`;
}

/** ` (next: Gold, 120 more pts earned)`, or ` (the top tier)`. */
function tierNextText(tier: MemberTierResponse): string {
  if (!tier.next || tier.progress.remaining === null) return ' (the top tier)';
  return ` (next: ${tier.next.name}, ${leftText(tier, tier.progress.remaining)})`;
}

export const tierCommand = defineCommand({
  name: 'tier',
  aliases: ['vip'],
  description: 'Your VIP tier, the next one and what is left to reach it',
  argNames: [],
  args: noArgs,
  run: (input, deps) =>
    inGroup(input, deps, async ({ client, identityKey }) => {
      const tier = await client.tier(identityKey);
      if (tier.tier === null) return { text: 'This community has no VIP tiers.', ephemeral: true };
      const basis = tier.progress.basis === 'spent' ? 'Spent' : 'Earned';
      const period = tier.progress.period ? (PERIOD_TEXT[tier.progress.period] ?? tier.progress.period) : '';
      return {
        title: `Your tier: ${tier.tier}`,
        text: tier.next
          ? `Next: ${tier.next.name}, ${leftText(tier, tier.progress.remaining ?? '0')} to reach it.`
          : 'You are at the top tier.',
        fields: [
          { name: 'Multiplier', value: `×${tier.multiplier}`, inline: true },
          { name: basis, value: `${tier.progress.current} ${period}`.trim(), inline: true },
          ...(tier.progress.graceUntil
            ? [{ name: 'Kept until', value: `${tier.progress.graceUntil.slice(0, 10)} (grace)`, inline: true }]
            : []),
        ],
        ephemeral: true,
      };
    }),
});

export const streakCommand = defineCommand({
  name: 'streak',
  aliases: [],
  description: 'Your streak, multiplier and milestones to claim',
  argNames: [],
  args: noArgs,
  run: (input, deps) =>
    inGroup(input, deps, async ({ client, identityKey }) => {
      const status = await client.streakStatus(identityKey);
      const unclaimed = status.unclaimedMilestones;
      return {
        title: 'Your streak',
        text: status.checkedInToday ? 'You checked in today.' : 'You have not checked in today: /daily',
        fields: [
          { name: 'Current', value: `${status.currentStreak} day(s)`, inline: true },
          { name: 'Longest', value: `${status.longestStreak} day(s)`, inline: true },
          { name: 'Multiplier', value: `×${status.multiplier}`, inline: true },
          {
            name: 'Unclaimed milestones',
            value: unclaimed.length ? unclaimed.map((m) => `${m.days} days: ${m.bonus} pts`).join(', ') : 'none',
          },
          ...(status.nextMilestone
            ? [
                {
                  name: 'Next milestone',
                  value: `${status.nextMilestone.days} days (+${status.nextMilestone.bonus} pts) in ${status.nextMilestone.daysRemaining} day(s)`,
                },
              ]
            : []),
        ],
        ...(unclaimed.length ? { buttons: milestoneButtons(unclaimed) } : {}),
      };
    }),
});

const METRICS = {
  tokens: 'pts_earned',
  pts: 'pts_earned',
  streaks: 'streak',
  streak: 'streak',
  activity: 'activity',
  claims: 'claims',
} as const;
const PERIODS = {
  week: 'weekly',
  weekly: 'weekly',
  month: 'monthly',
  monthly: 'monthly',
  all: 'all_time',
  alltime: 'all_time',
  all_time: 'all_time',
} as const;
const METRIC_LABELS: Record<string, string> = {
  pts_earned: 'tokens earned',
  streak: 'current streak',
  activity: 'rewarded actions',
  claims: 'perks claimed',
};

export const leaderboardCommand = defineCommand({
  name: 'leaderboard',
  aliases: ['lb'],
  description: 'Top members: /lb [tokens|streaks|activity|claims] [week|month|all]',
  argNames: ['metric', 'period'],
  args: z.object({
    metric: z
      .enum(Object.keys(METRICS) as [keyof typeof METRICS], {
        message: 'metric must be tokens, streaks, activity or claims',
      })
      .default('tokens'),
    period: z
      .enum(Object.keys(PERIODS) as [keyof typeof PERIODS], { message: 'period must be week, month or all' })
      .default('week'),
  }),
  run: (input, deps) =>
    inGroup(input, deps, async ({ client, identityKey }) => {
      const board = await client.leaderboard({
        metric: METRICS[input.args.metric],
        period: PERIODS[input.args.period],
        limit: 10,
        user: identityKey,
      });
      const label = METRIC_LABELS[board.metric] ?? board.metric;
      const period = board.period === 'all_time' ? 'all time' : board.period.replace('ly', '').replace('dai', 'day');
      if (board.leaderboard.length === 0) return { text: `Nobody is on the ${label} leaderboard (${period}) yet.` };
      const lines = board.leaderboard.map((e) => `${e.rank}. ${e.username}: ${e.value}`);
      const me = board.me ? `\nYou: #${board.me.rank} with ${board.me.value}` : '';
      return { title: `Leaderboard: ${label} (${period})`, text: `${lines.join('\n')}${me}` };
    }),
});

export const perksCommand = defineCommand({
  name: 'perks',
  aliases: ['rewards'],
  description: 'Perks you can claim with your pts',
  argNames: [],
  args: noArgs,
  run: (input, deps) =>
    inGroup(input, deps, async ({ client }) => {
      await reportMemberRoles(input, client, deps);
      const { perks } = await client.perks({ available: true });
      if (perks.length === 0) return { text: 'No perks are available right now.' };
      const shown = perks.slice(0, 10);
      return {
        title: 'Perks',
        text: 'Claim one with /claim <id> or a button below.',
        fields: shown.map((p) => ({
          name: `#${p.id} ${p.name}`,
          value: `${p.cost} pts${p.remainingSupply === null ? '' : `, ${p.remainingSupply} left`}${p.endsAt ? `, until ${p.endsAt.slice(0, 16).replace('T', ' ')} UTC` : ''}${p.description ? ` — ${p.description}` : ''}`,
        })),
        buttons: shown.map((p) => ({
          action: `perk:${p.id}`,
          label: `Claim ${p.name} (${p.cost} pts)`.slice(0, 60),
          style: 'primary' as const,
        })),
      };
    }),
});

/** Redeems a perk for the user; shared by `/claim` and the perk buttons. */
export async function claimPerk(input: CommandInput<unknown>, deps: BotDeps, perkId: string): Promise<Reply> {
  return inGroup(input, deps, async ({ client, identityKey }) => {
    await reportMemberRoles(input, client, deps);
    const result = await client.redeemPerk({ perkId, userIdentifier: identityKey, platform: input.user.platform });
    const name = result.perk?.name ?? `perk ${perkId}`;
    return {
      text: `You claimed ${name}${result.perk ? ` for ${result.perk.cost} pts` : ''}.${
        result.confirmationCode ? ` Confirmation code: ${result.confirmationCode}` : ''
      }`,
      ephemeral: true,
    };
  });
}

export const claimCommand = defineCommand({
  name: 'claim',
  aliases: ['buy'],
  description: 'Claim a perk: /claim <perk id>',
  argNames: ['perk'],
  args: z.object({
    perk: z
      .string({ message: 'give the perk id, e.g. /claim 3 (see /perks)' })
      .regex(/^[0-9a-fA-F-]{1,36}$/, 'the perk id is a number or uuid from /perks'),
  }),
  run: (input, deps) => claimPerk(input, deps, input.args.perk),
});

export const activityCommand = defineCommand({
  name: 'activity',
  aliases: [],
  description: 'Your latest rewards and claims',
  argNames: [],
  args: noArgs,
  run: (input, deps) =>
    inGroup(input, deps, async ({ client, identityKey }) => {
      const { items } = await client.activity(identityKey, { limit: 10 });
      if (items.length === 0) return { text: 'No activity yet: try /daily.' };
      return {
        title: 'Your activity',
        text: items
          .map((i) => `${i.occurredAt.slice(0, 10)} ${i.kind}: ${i.amount >= 0 ? '+' : ''}${i.amount} (${i.platform})`)
          .join('\n'),
        ephemeral: true,
      };
    }),
});

export const achievementsCommand = defineCommand({
  name: 'achievements',
  aliases: [],
  description: 'Your achievements and progress',
  argNames: [],
  args: noArgs,
  run: (input, deps) =>
    inGroup(input, deps, async ({ client, identityKey }) => {
      const result = await client.achievements(identityKey);
      if (result.achievements.length === 0) return { text: 'This community has no achievements yet.' };
      return {
        title: `Achievements (${result.unlockedCount} unlocked)`,
        text: result.achievements
          .map((a) => `${a.unlocked ? '✅' : '▫️'} ${a.name}: ${a.progress}/${a.threshold}`)
          .join('\n'),
      };
    }),
});

export const linkCommand = defineCommand({
  name: 'link',
  aliases: [],
  description: 'Join your accounts: /link gives a code; /link <code> on the other platform confirms it',
  argNames: ['code'],
  args: z.object({
    code: z
      .string()
      .regex(/^[A-Za-z0-9]{8}$/, 'the code has 8 letters and digits')
      .optional(),
  }),
  // The code is a secret: never logged, and a message holding it is deleted where others read it.
  sensitiveArgs: true,
  dmAllowed: true,
  run: async (input, deps) => {
    const code = input.args.code?.toUpperCase();
    if (input.place.groupId === null) {
      if (!code) return { text: LINK_IN_GROUP, ephemeral: true };
      return confirmInPrivate(input, deps, code);
    }
    return inGroup(input, deps, async ({ client, identityKey }) => {
      if (!code) {
        const issued = await client.linkCode(identityKey);
        return {
          text: `Your link code is ${issued.code} (valid until ${issued.expiresAt}). Send /link ${issued.code} from your other account, on the other platform${input.place.platform === 'discord' ? '' : ' (in a private chat with the bot there)'}.`,
          ephemeral: true,
          secret: true,
        };
      }
      if (input.place.typedInPublic) {
        // Everyone in the group read the code: it is voided before anyone else can type it (issue 24 §6).
        const { revoked } = await client.linkRevoke(code);
        deps.logger.info(
          { platform: input.place.platform, groupId: input.place.groupId, revoked },
          'link code typed in a group voided',
        );
        return { text: LINK_CODE_IN_PUBLIC, ephemeral: true };
      }
      await client.linkConfirm(identityKey, code);
      return { text: LINKED, ephemeral: true };
    });
  },
});

const LINKED = 'Your accounts are linked: they now share one wallet, streak and balance.';
const LINK_IN_GROUP =
  'Run /link in your pts group (or on your other platform) to get a code, then send /link <code> to me here.';
const LINK_CODE_IN_PUBLIC =
  'Never type a link code in a group: everyone here can read it, so I deleted your message and the code no longer works. ' +
  'Ask for a new code with /link on your other account, then send /link <code> to me in a private chat.';

/**
 * `/link <code>` in a private chat: the code belongs to one brand, so it is tried with the brands of the
 * groups the user is in (set up with /setup) until one knows it. An unknown code costs nothing; a refusal by
 * the brand that issued it burns it (core-api), and that answer is the user's.
 */
async function confirmInPrivate(input: CommandInput<unknown>, deps: BotDeps, code: string): Promise<Reply> {
  const groups = input.memberGroups ? await input.memberGroups() : [];
  const tried = new Set<string>();
  for (const groupId of groups) {
    const credentials = await deps.groups.get(input.place.platform, groupId);
    if (!credentials || tried.has(credentials.brandId)) continue;
    tried.add(credentials.brandId);
    try {
      await deps.coreClient(credentials).linkConfirm(identityOf(input.user, deps), code);
      return { text: LINKED, ephemeral: true };
    } catch (error) {
      if (error instanceof CoreApiError && error.code === 'INVALID_LINK_CODE' && error.details?.reason === 'unknown')
        continue;
      throw error;
    }
  }
  if (tried.size === 0) {
    return {
      text: "I could not find a pts group you are in. Join your community's group (where pts is set up), then send /link <code> here again.",
      ephemeral: true,
    };
  }
  return {
    text: 'That code is not valid: check it, or ask for a new one with /link on your other account.',
    ephemeral: true,
  };
}

/** The platform of an identity key (`telegram_1002@…` → telegram), for telling a user where to go. */
function platformOfIdentity(identityKey: string): string {
  return parsePlatformIdentity(identityKey)?.platform ?? 'email';
}

export const unlinkCommand = defineCommand({
  name: 'unlink',
  aliases: [],
  description: 'Take this account out of the accounts you joined with /link (it gets its own wallet again)',
  argNames: [],
  args: noArgs,
  run: (input, deps) =>
    inGroup(input, deps, async ({ client, identityKey }) => {
      try {
        const result = await client.unlink(identityKey);
        const others = result.identities.map((i) => platformOfIdentity(i.identityKey));
        return {
          text:
            `This ${input.user.platform} account is unlinked: it starts again with a wallet, streak and balance of its own. ` +
            `Your pts stay with your ${[...new Set(others)].join(' and ')} account.`,
          ephemeral: true,
        };
      } catch (error) {
        if (error instanceof CoreApiError && error.details?.reason === 'not_linked') {
          return { text: 'This account is not linked to any other; there is nothing to unlink.', ephemeral: true };
        }
        if (error instanceof CoreApiError && error.details?.reason === 'primary_identity') {
          const linked = Array.isArray(error.details.linked) ? error.details.linked.map(String) : [];
          const platforms = [...new Set(linked.map(platformOfIdentity))];
          return {
            text:
              `This ${input.user.platform} account holds your joined wallet and balance, so it stays. ` +
              `Send /unlink from your ${platforms.join(' or ') || 'other'} account instead.`,
            ephemeral: true,
          };
        }
        throw error;
      }
    }),
});
