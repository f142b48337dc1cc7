import { type Campaign, createCampaignRequestSchema, HASHTAG_PATTERN } from '@pts/shared';
import { type CliCommand, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, parseNonNegativeInteger, requireFlag } from '../flags.ts';
import { formatTable } from '../table.ts';

/** `pts campaign create`. */
export const createCampaignCommand: CliCommand = {
  usage:
    "pts campaign create --brand ID --hashtag '#tag' (--reward N | --multiplier X) --start ISO --end ISO " +
    '[--max-per-user N] [--exclude-brand-posts] [--json]',
  summary: 'create a hashtag campaign: posts with the hashtag count for rewards between --start and --end',
  async run(args, context) {
    const flags = parseFlags(args, {
      brand: { type: 'string' },
      hashtag: { type: 'string' },
      reward: { type: 'string' },
      multiplier: { type: 'string' },
      start: { type: 'string' },
      end: { type: 'string' },
      'max-per-user': { type: 'string' },
      'exclude-brand-posts': { type: 'boolean' },
      ...jsonOption,
    });
    const brandId = requireFlag(flags.brand, 'brand');
    const hashtag = requireFlag(flags.hashtag, 'hashtag');
    if (!HASHTAG_PATTERN.test(hashtag)) {
      throw new UsageError(`--hashtag must be # followed by 1 to 100 letters, digits or _, got "${hashtag}"`);
    }
    if ((flags.reward === undefined) === (flags.multiplier === undefined)) {
      throw new UsageError('give exactly one of --reward and --multiplier');
    }
    const start = parseDate(requireFlag(flags.start, 'start'), 'start');
    const end = parseDate(requireFlag(flags.end, 'end'), 'end');
    const input = {
      hashtag,
      startDate: start,
      endDate: end,
      ...(flags.reward !== undefined ? { reward: parseNonNegativeInteger(flags.reward, 'reward') } : {}),
      ...(flags.multiplier !== undefined ? { rewardMultiplier: parseMultiplier(flags.multiplier) } : {}),
      ...(flags['max-per-user'] !== undefined
        ? { maxClaimsPerUser: parseNonNegativeInteger(flags['max-per-user'], 'max-per-user') }
        : {}),
      excludeBrandPosts: flags['exclude-brand-posts'] === true,
    };
    const checked = createCampaignRequestSchema.safeParse(input);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      throw new UsageError(`invalid campaign: ${issue?.path.join('.')}: ${issue?.message}`);
    }
    const campaign = await context.client().createCampaign(brandId, checked.data);
    if (flags.json) return context.printJson(campaign);
    context.print(`Campaign ${campaign.id} for ${campaign.brandId}: ${campaign.hashtag}`);
    context.print(`  ${describeReward(campaign)}, ${campaign.startDate} → ${campaign.endDate}`);
  },
};

/** `pts campaign list`. */
export const listCampaignsCommand: CliCommand = {
  usage: 'pts campaign list --brand ID [--json]',
  summary: "list a brand's hashtag campaigns",
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, ...jsonOption });
    const brandId = requireFlag(flags.brand, 'brand');
    const campaigns = await context.client().listCampaigns(brandId);
    if (flags.json) return context.printJson({ campaigns });
    if (campaigns.length === 0) return context.print(`No campaigns for ${brandId}.`);
    context.print(
      formatTable(
        ['ID', 'HASHTAG', 'REWARD', 'START', 'END', 'MAX/USER', 'EXCL. BRAND'],
        campaigns.map((c) => [
          c.id,
          c.hashtag,
          describeReward(c),
          c.startDate,
          c.endDate,
          String(c.maxClaimsPerUser),
          c.excludeBrandPosts ? 'yes' : 'no',
        ]),
      ),
    );
  },
};

function describeReward(campaign: Campaign): string {
  return campaign.reward !== null ? `${campaign.reward} pts` : `×${campaign.rewardMultiplier}`;
}

function parseDate(value: string, flag: string): string {
  const time = Date.parse(value);
  if (Number.isNaN(time) || !/^\d{4}-\d{2}-\d{2}/.test(value)) {
    throw new UsageError(`--${flag} must be an ISO 8601 date-time such as 2026-12-01T00:00:00Z, got "${value}"`);
  }
  return new Date(time).toISOString();
}

function parseMultiplier(value: string): number {
  const number = Number(value.trim());
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(number > 0) || number > 100) {
    throw new UsageError(`--multiplier must be a number above 0 and at most 100, got "${value}"`);
  }
  return number;
}
