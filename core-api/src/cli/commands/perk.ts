import type { AddConstraintRequest, Perk, PerkConstraint, UpdatePerkRequest } from '@pts/shared';
import { type CliCommand, type CommandContext, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, parseNonNegativeInteger, parseOnOff, requireFlag } from '../flags.ts';
import { formatTable } from '../table.ts';

/** Flags shared by `perk create` and `perk update`. */
const perkFlags = {
  name: { type: 'string' },
  cost: { type: 'string' },
  supply: { type: 'string' },
  'max-per-user': { type: 'string' },
  category: { type: 'string' },
  description: { type: 'string' },
  charges: { type: 'string' },
  'image-url': { type: 'string' },
  active: { type: 'string' },
} as const;

type PerkFlagValues = { [K in keyof typeof perkFlags]?: string | undefined };

/** The request fields the flags give (only those present). */
function perkFields(flags: PerkFlagValues): UpdatePerkRequest {
  const fields: UpdatePerkRequest = {};
  if (flags.name !== undefined) fields.name = flags.name.trim();
  if (flags.cost !== undefined) fields.cost = parseNonNegativeInteger(flags.cost, 'cost');
  if (flags.supply !== undefined) fields.maxSupply = parseSupply(flags.supply);
  if (flags['max-per-user'] !== undefined) fields.maxPerUser = parseMaxPerUser(flags['max-per-user']);
  if (flags.category !== undefined) fields.category = flags.category.trim();
  if (flags.description !== undefined) fields.description = flags.description;
  if (flags.charges !== undefined) fields.chargesPerToken = parseNonNegativeInteger(flags.charges, 'charges');
  if (flags['image-url'] !== undefined) {
    const url = flags['image-url'].trim();
    if (!URL.canParse(url)) throw new UsageError(`--image-url must be a URL, got "${url}"`);
    fields.imageUrl = url;
  }
  if (flags.active !== undefined) fields.active = parseOnOff(flags.active, 'active');
  return fields;
}

/** `pts perk create`. */
export const createPerkCommand: CliCommand = {
  usage:
    'pts perk create --brand ID --name NAME --cost TOKENS [--supply N|unlimited] [--max-per-user N|unlimited] ' +
    '[--category C] [--description D] [--charges K] [--image-url URL] [--active on|off] [--json]',
  summary: 'create a perk and its on-chain PerkNFT collection (repeat to finish a create that failed half-way)',
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, ...perkFlags, ...jsonOption });
    const brandId = requireFlag(flags.brand, 'brand');
    requireFlag(flags.name, 'name');
    requireFlag(flags.cost, 'cost');
    const fields = perkFields(flags);
    const perk = await context
      .client()
      .createPerk({ brandId, ...fields, name: fields.name ?? '', cost: fields.cost ?? 0 });
    if (flags.json) return context.printJson(perk);
    context.print(`Created perk ${perk.name} (id ${perk.perkId})`);
    printPerk(context, perk);
  },
};

/** `pts perk update`. */
export const updatePerkCommand: CliCommand = {
  usage:
    'pts perk update --id ID [--name NAME] [--cost TOKENS] [--supply N|unlimited] [--max-per-user N|unlimited] ' +
    '[--category C] [--description D] [--charges K] [--image-url URL] [--active on|off] [--json]',
  summary: 'change a perk (on-chain settings are sent to PerkNFT)',
  async run(args, context) {
    const flags = parseFlags(args, { id: { type: 'string' }, ...perkFlags, ...jsonOption });
    const perkId = parsePerkId(requireFlag(flags.id, 'id'), 'id');
    const fields = perkFields(flags);
    if (Object.keys(fields).length === 0) {
      throw new UsageError(
        'give at least one of --name, --cost, --supply, --max-per-user, --category, --description, --charges, --image-url, --active',
      );
    }
    const perk = await context.client().updatePerk(perkId, fields);
    if (flags.json) return context.printJson(perk);
    context.print(`Updated perk ${perk.name} (id ${perk.perkId})`);
    printPerk(context, perk);
  },
};

/** `pts perk archive` and `pts perk restore`: undo a perk made by mistake (docs/portal.md, "Undo"). */
export function archivePerkCommandOf(archived: boolean): CliCommand {
  const verb = archived ? 'archive' : 'restore';
  return {
    usage: `pts perk ${verb} --id ID [--json]`,
    summary: archived
      ? 'archive a perk: out of every catalogue, redemptions refused (restore undoes it)'
      : 'restore an archived perk (it comes back inactive: --active on with pts perk update offers it again)',
    async run(args, context) {
      const flags = parseFlags(args, { id: { type: 'string' }, ...jsonOption });
      const perkId = parsePerkId(requireFlag(flags.id, 'id'), 'id');
      const perk = await context.client().archivePerk(perkId, archived);
      if (flags.json) return context.printJson(perk);
      context.print(`${archived ? 'Archived' : 'Restored'} perk ${perk.name} (id ${perk.perkId})`);
      printPerk(context, perk);
    },
  };
}

/** `pts perk list`. */
export const listPerksCommand: CliCommand = {
  usage: 'pts perk list [--brand ID] [--json]',
  summary: "list perks (one brand's with --brand)",
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, ...jsonOption });
    const brandId = flags.brand === undefined ? undefined : requireFlag(flags.brand, 'brand');
    const perks = await context.client().listPerks(brandId);
    if (flags.json) return context.printJson({ perks });
    if (perks.length === 0) {
      context.print('No perks yet. Create one: pts perk create --brand ID --name NAME --cost TOKENS');
      return;
    }
    context.print(
      formatTable(
        ['ID', 'BRAND', 'NAME', 'CATEGORY', 'COST', 'SUPPLY', 'PER USER', 'ACTIVE', 'CHAIN'],
        perks.map((perk) => [
          String(perk.perkId),
          perk.brandId,
          perk.name,
          perk.category,
          String(perk.cost),
          perk.maxSupply === null ? 'unlimited' : String(perk.maxSupply),
          perk.maxPerUser === 0 ? 'unlimited' : String(perk.maxPerUser),
          perk.active ? 'on' : 'off',
          perk.chainStatus,
        ]),
      ),
    );
  },
};

const CONSTRAINT_USAGE = [
  'pts perk constraint add --perk ID --kind external_api --url URL [--ttl SECONDS] [--json]',
  'pts perk constraint add --perk ID --kind min_balance --amount TOKENS [--json]',
  'pts perk constraint add --perk ID --kind chat_role --platform discord|telegram --guild G --role R [--json]',
  'pts perk constraint list --perk ID [--json]',
  'pts perk constraint remove --perk ID --constraint CONSTRAINT_ID [--json]',
].join('\n       ');

/** `pts perk constraint add|list|remove`. */
export const perkConstraintCommand: CliCommand = {
  usage: CONSTRAINT_USAGE,
  summary: "manage a perk's eligibility constraints (external API, token balance, chat role)",
  async run(args, context) {
    const [action, ...rest] = args;
    if (action === 'add') return addConstraint(rest, context);
    if (action === 'list') return listConstraints(rest, context);
    if (action === 'remove') return removeConstraint(rest, context);
    throw new UsageError(
      action === undefined ? '"perk constraint" needs add, list or remove' : `unknown action "${action}"`,
    );
  },
};

async function addConstraint(args: string[], context: CommandContext): Promise<void> {
  const flags = parseFlags(args, {
    perk: { type: 'string' },
    kind: { type: 'string' },
    url: { type: 'string' },
    ttl: { type: 'string' },
    amount: { type: 'string' },
    platform: { type: 'string' },
    guild: { type: 'string' },
    role: { type: 'string' },
    ...jsonOption,
  });
  const perkId = parsePerkId(requireFlag(flags.perk, 'perk'), 'perk');
  const kind = requireFlag(flags.kind, 'kind');
  let input: AddConstraintRequest;
  if (kind === 'external_api') {
    const url = requireFlag(flags.url, 'url');
    if (!URL.canParse(url)) throw new UsageError(`--url must be a URL, got "${url}"`);
    input = { kind, url, ...(flags.ttl !== undefined && { ttlSeconds: parseNonNegativeInteger(flags.ttl, 'ttl') }) };
  } else if (kind === 'min_balance') {
    input = { kind, amount: parseNonNegativeInteger(requireFlag(flags.amount, 'amount'), 'amount') };
  } else if (kind === 'chat_role') {
    const platform = requireFlag(flags.platform, 'platform');
    if (platform !== 'discord' && platform !== 'telegram') {
      throw new UsageError(`--platform must be discord or telegram, got "${platform}"`);
    }
    input = { kind, platform, guildId: requireFlag(flags.guild, 'guild'), role: requireFlag(flags.role, 'role') };
  } else {
    throw new UsageError(`--kind must be external_api, min_balance or chat_role, got "${kind}"`);
  }
  const constraint = await context.client().addPerkConstraint(perkId, input);
  if (flags.json) return context.printJson(constraint);
  context.print(`Added ${constraint.kind} constraint ${constraint.constraintId} to perk ${perkId}`);
  printConstraints(context, [constraint]);
}

async function listConstraints(args: string[], context: CommandContext): Promise<void> {
  const flags = parseFlags(args, { perk: { type: 'string' }, ...jsonOption });
  const perkId = parsePerkId(requireFlag(flags.perk, 'perk'), 'perk');
  const constraints = await context.client().listPerkConstraints(perkId);
  if (flags.json) return context.printJson({ constraints });
  if (constraints.length === 0) {
    context.print(`Perk ${perkId} has no constraints: every wallet is eligible`);
    return;
  }
  printConstraints(context, constraints);
}

async function removeConstraint(args: string[], context: CommandContext): Promise<void> {
  const flags = parseFlags(args, { perk: { type: 'string' }, constraint: { type: 'string' }, ...jsonOption });
  const perkId = parsePerkId(requireFlag(flags.perk, 'perk'), 'perk');
  const constraintId = requireFlag(flags.constraint, 'constraint');
  await context.client().removePerkConstraint(perkId, constraintId);
  if (flags.json) return context.printJson({ removed: constraintId, perkId });
  context.print(`Removed constraint ${constraintId} from perk ${perkId}`);
}

function printConstraints(context: CommandContext, constraints: PerkConstraint[]): void {
  context.print(
    formatTable(
      ['CONSTRAINT ID', 'KIND', 'SETTINGS', 'TTL'],
      constraints.map((constraint) => [
        constraint.constraintId,
        constraint.kind,
        Object.entries(constraint.config)
          .map(([key, value]) => `${key}=${String(value)}`)
          .join(' '),
        constraint.kind === 'external_api' ? `${constraint.ttlSeconds} s` : '-',
      ]),
    ),
  );
}

function printPerk(context: CommandContext, perk: Perk): void {
  context.print(`  brand          ${perk.brandId}`);
  context.print(`  category       ${perk.category}`);
  context.print(`  cost           ${perk.cost} tokens`);
  context.print(`  supply         ${perk.maxSupply === null ? 'unlimited' : perk.maxSupply}`);
  context.print(`  max per user   ${perk.maxPerUser === 0 ? 'unlimited' : perk.maxPerUser}`);
  context.print(`  charges        ${perk.chargesPerToken} per perk`);
  context.print(`  active         ${perk.active ? 'on' : 'off'}`);
  context.print(`  chain          ${perk.chainStatus}${perk.chainTxHash ? ` (tx ${perk.chainTxHash})` : ''}`);
}

function parsePerkId(value: string, flag: string): number {
  const id = parseNonNegativeInteger(value, flag);
  if (id < 1) throw new UsageError(`--${flag} must be a perk id (1 or more), got "${value}"`);
  return id;
}

function parseSupply(value: string): number | null {
  if (value.trim() === 'unlimited') return null;
  const supply = parseNonNegativeInteger(value, 'supply');
  if (supply < 1) throw new UsageError(`--supply must be 1 or more, or "unlimited", got "${value}"`);
  return supply;
}

function parseMaxPerUser(value: string): number {
  return value.trim() === 'unlimited' ? 0 : parseNonNegativeInteger(value, 'max-per-user');
}
