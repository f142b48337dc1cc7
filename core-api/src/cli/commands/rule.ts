import {
  type CurrencyCode,
  DETECTION_METHODS,
  describeRate,
  type Rule,
  type SetRuleRequest,
  UNLIMITED_CLAIMS,
} from '@pts/shared';
import { type CliCommand, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, parseList, parseMaxClaims, parseNonNegativeInteger, requireFlag } from '../flags.ts';
import { formatTable } from '../table.ts';

type DetectionMethod = (typeof DETECTION_METHODS)[number];

/** `pts rule set`: create or replace a brand's rule for one event type. */
export const setRuleCommand: CliCommand = {
  usage:
    'pts rule set --brand ID --event-type TYPE --reward N|(--per-unit P --unit U --currency C [--min-value V] ' +
    '[--max-reward R] [--rounding down|nearest|up]) [--cooldown-hours H] [--max-claims M|unlimited] ' +
    '[--max-total T] [--channels a,b] [--detection manual|url_pattern|form_auto|sdk_auto] ' +
    '[--url-patterns /a,/b/*] [--success-selectors .ok,#done] [--inactive] [--json]',
  summary: 'create or replace the rule for an event type (omitted settings take their defaults)',
  async run(args, context) {
    const flags = parseFlags(args, {
      brand: { type: 'string' },
      'event-type': { type: 'string' },
      reward: { type: 'string' },
      'per-unit': { type: 'string' },
      unit: { type: 'string' },
      currency: { type: 'string' },
      'min-value': { type: 'string' },
      'max-reward': { type: 'string' },
      rounding: { type: 'string' },
      'cooldown-hours': { type: 'string' },
      'max-claims': { type: 'string' },
      'max-total': { type: 'string' },
      channels: { type: 'string' },
      detection: { type: 'string' },
      'url-patterns': { type: 'string' },
      'success-selectors': { type: 'string' },
      inactive: { type: 'boolean' },
      ...jsonOption,
    });
    const brandId = requireFlag(flags.brand, 'brand');
    const eventType = requireFlag(flags['event-type'], 'event-type');
    const settings: SetRuleRequest = rewardSettings(flags);
    if (flags['cooldown-hours'] !== undefined) {
      settings.cooldownHours = parseNonNegativeInteger(flags['cooldown-hours'], 'cooldown-hours');
    }
    if (flags['max-claims'] !== undefined) settings.maxClaims = parseMaxClaims(flags['max-claims']);
    if (flags['max-total'] !== undefined) settings.maxTotal = parseNonNegativeInteger(flags['max-total'], 'max-total');
    if (flags.channels !== undefined) settings.channels = parseList(flags.channels);
    if (flags.detection !== undefined) settings.detectionMethod = parseDetection(flags.detection);
    // What the browser SDK watches for (docs/sdk.md). A comma separates entries, as in a CSS selector list.
    if (flags['url-patterns'] !== undefined || flags['success-selectors'] !== undefined) {
      settings.detectionConfig = {
        ...(flags['url-patterns'] !== undefined ? { urlPatterns: parseList(flags['url-patterns']) } : {}),
        ...(flags['success-selectors'] !== undefined
          ? { successSelectors: parseList(flags['success-selectors']) }
          : {}),
      };
    }
    if (flags.inactive) settings.active = false;
    const rule = await context.client().setRule(brandId, eventType, settings);
    if (flags.json) return context.printJson(rule);
    context.print(`Rule ${rule.eventType} for ${rule.brandId} ${rule.active ? 'is active' : 'is inactive'}`);
    context.print(`  event id      ${rule.eventId}`);
    context.print(`  reward        ${describeReward(rule)}`);
    context.print(`  cooldown      ${rule.cooldownHours === 0 ? 'none' : `${rule.cooldownHours} h`}`);
    context.print(`  max claims    ${formatMaxClaims(rule.maxClaims)} per user`);
    context.print(`  max total     ${rule.maxTotal ?? 'unlimited'} (claimed ${rule.totalClaims ?? '-'})`);
    context.print(`  detection     ${rule.detectionMethod}`);
    if (rule.detectionConfig.channels) context.print(`  channels      ${rule.detectionConfig.channels.join(', ')}`);
    if (rule.detectionConfig.urlPatterns)
      context.print(`  url patterns  ${rule.detectionConfig.urlPatterns.join(', ')}`);
    if (rule.detectionConfig.successSelectors) {
      context.print(`  selectors     ${rule.detectionConfig.successSelectors.join(', ')}`);
    }
  },
};

/** `pts rule list`. */
export const listRulesCommand: CliCommand = {
  usage: 'pts rule list --brand ID [--json]',
  summary: "list a brand's rules",
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, ...jsonOption });
    const brandId = requireFlag(flags.brand, 'brand');
    const rules = await context.client().listRules(brandId);
    if (flags.json) return context.printJson({ rules });
    if (rules.length === 0) {
      context.print(`No rules for ${brandId}. Add one: pts rule set --brand ${brandId} --event-type TYPE --reward N`);
      return;
    }
    context.print(
      formatTable(
        ['EVENT TYPE', 'REWARD', 'COOLDOWN H', 'MAX/USER', 'MAX TOTAL', 'CLAIMED', 'DETECTION', 'ACTIVE', 'EVENT ID'],
        rules.map((rule: Rule) => [
          rule.eventType,
          describeReward(rule),
          String(rule.cooldownHours),
          formatMaxClaims(rule.maxClaims),
          rule.maxTotal === null ? '-' : String(rule.maxTotal),
          rule.totalClaims === null ? '-' : String(rule.totalClaims),
          rule.detectionMethod,
          rule.archivedAt ? 'archived' : rule.active ? 'yes' : 'no',
          rule.eventId,
        ]),
      ),
    );
  },
};

/** `pts rule archive|restore`: the admin API's rule archive (the portal's Rules page does the same). */
export function archiveRuleCommandOf(archived: boolean): CliCommand {
  const verb = archived ? 'archive' : 'restore';
  return {
    usage: `pts rule ${verb} --brand ID --event-type TYPE [--json]`,
    summary: archived
      ? 'archive a rule: its events are refused (RULE_ARCHIVED) until it is restored'
      : 'restore an archived rule (it comes back paused: pts rule set ... to make it earn again)',
    async run(args, context) {
      const flags = parseFlags(args, { brand: { type: 'string' }, 'event-type': { type: 'string' }, ...jsonOption });
      const brandId = requireFlag(flags.brand, 'brand');
      const eventType = requireFlag(flags['event-type'], 'event-type');
      const rule = await context.client().archiveRule(brandId, eventType, archived);
      if (flags.json) return context.printJson(rule);
      context.print(
        archived
          ? `Archived rule ${rule.eventType} for ${rule.brandId}: its events are refused (RULE_ARCHIVED)`
          : `Restored rule ${rule.eventType} for ${rule.brandId}: it is paused until set active`,
      );
    },
  };
}

/** `--reward N` (fixed), or a rate: `--per-unit P --unit U --currency C` with its optional minimum, cap and rounding. */
function rewardSettings(flags: {
  reward?: string | undefined;
  'per-unit'?: string | undefined;
  unit?: string | undefined;
  currency?: string | undefined;
  'min-value'?: string | undefined;
  'max-reward'?: string | undefined;
  rounding?: string | undefined;
}): SetRuleRequest {
  const rateFlags = ['per-unit', 'unit', 'currency', 'min-value', 'max-reward', 'rounding'] as const;
  const given = rateFlags.filter((flag) => flags[flag] !== undefined);
  if (flags.reward !== undefined) {
    if (given.length > 0) {
      throw new UsageError(
        `--reward is a fixed reward: leave out --${given.join(', --')}, or drop --reward for a rate`,
      );
    }
    return { rewardAmount: parseNonNegativeInteger(flags.reward, 'reward') };
  }
  if (flags['per-unit'] === undefined) {
    throw new UsageError(
      '--reward is required (fixed points), or give --per-unit P --unit U --currency C (points per unit of value)',
    );
  }
  const rounding = flags.rounding;
  if (rounding !== undefined && rounding !== 'down' && rounding !== 'nearest' && rounding !== 'up') {
    throw new UsageError(`--rounding must be down, nearest or up, got "${rounding}"`);
  }
  // Amounts stay decimal strings: the server checks them against the currency's minor units.
  return {
    rate: {
      pts: parseNonNegativeInteger(flags['per-unit'], 'per-unit'),
      per: requireFlag(flags.unit, 'unit'),
      currency: requireFlag(flags.currency, 'currency').toUpperCase() as CurrencyCode,
      ...(rounding === undefined ? {} : { rounding }),
    },
    ...(flags['min-value'] === undefined ? {} : { minValue: flags['min-value'] }),
    ...(flags['max-reward'] === undefined
      ? {}
      : { maxReward: parseNonNegativeInteger(flags['max-reward'], 'max-reward') }),
  };
}

/** "25" for a fixed rule, "2 pts per $1.00 (from 5.00, at most 500)" for a rate rule. */
function describeReward(rule: Rule): string {
  if (!rule.rate) return String(rule.rewardAmount);
  const limits = [
    ...(rule.minValue === undefined ? [] : [`from ${rule.minValue}`]),
    ...(rule.maxReward === undefined ? [] : [`at most ${rule.maxReward}`]),
  ];
  return `${describeRate(rule.rate)}${limits.length > 0 ? ` (${limits.join(', ')})` : ''}`;
}

function parseDetection(value: string): DetectionMethod {
  const method = DETECTION_METHODS.find((candidate) => candidate === value.trim());
  if (!method) throw new UsageError(`--detection must be one of ${DETECTION_METHODS.join(', ')}, got "${value}"`);
  return method;
}

function formatMaxClaims(maxClaims: number): string {
  return (UNLIMITED_CLAIMS as readonly number[]).includes(maxClaims) ? 'unlimited' : String(maxClaims);
}
