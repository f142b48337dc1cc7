import { type Drop, updateDropRequestSchema } from '@pts/shared';
import { type CliCommand, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, parseNonNegativeInteger, requireFlag } from '../flags.ts';
import { formatTable } from '../table.ts';

/** `pts drop list`. */
export const listDropsCommand: CliCommand = {
  usage: 'pts drop list --brand ID [--json]',
  summary: "list a brand's drops with what is claimed and left",
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, ...jsonOption });
    const brandId = requireFlag(flags.brand, 'brand');
    const drops = await context.client().listDrops(brandId);
    if (flags.json) return context.printJson({ drops });
    if (drops.length === 0) return context.print(`No drops for ${brandId}.`);
    context.print(
      formatTable(
        ['ID', 'NAME', 'AMOUNT', 'CLAIMED', 'SUPPLY', 'PER MEMBER', 'START', 'END'],
        drops.map((d) => [
          d.dropId,
          d.name,
          String(d.amount),
          String(d.claimed),
          String(d.totalSupply),
          String(d.perUserLimit),
          d.startsAt,
          d.endsAt,
        ]),
      ),
    );
  },
};

/** `pts drop update`: the fields of a drop where a change is safe (docs/portal.md, "Changing a drop"). */
export const updateDropCommand: CliCommand = {
  usage:
    'pts drop update --brand ID --drop ID [--name NAME] [--amount N] [--supply N] [--per-member N] ' +
    '[--start ISO] [--end ISO] [--json]',
  summary:
    'change a drop: name, supply and per-member limit until it ends; amount before the first claim; start before it opens',
  async run(args, context) {
    const flags = parseFlags(args, {
      brand: { type: 'string' },
      drop: { type: 'string' },
      name: { type: 'string' },
      amount: { type: 'string' },
      supply: { type: 'string' },
      'per-member': { type: 'string' },
      start: { type: 'string' },
      end: { type: 'string' },
      ...jsonOption,
    });
    const brandId = requireFlag(flags.brand, 'brand');
    const dropId = requireFlag(flags.drop, 'drop');
    const input = {
      ...(flags.name !== undefined ? { name: flags.name } : {}),
      ...(flags.amount !== undefined ? { amount: parseNonNegativeInteger(flags.amount, 'amount') } : {}),
      ...(flags.supply !== undefined ? { totalSupply: parseNonNegativeInteger(flags.supply, 'supply') } : {}),
      ...(flags['per-member'] !== undefined
        ? { perUserLimit: parseNonNegativeInteger(flags['per-member'], 'per-member') }
        : {}),
      ...(flags.start !== undefined ? { startsAt: parseDate(flags.start, 'start') } : {}),
      ...(flags.end !== undefined ? { endsAt: parseDate(flags.end, 'end') } : {}),
    };
    if (Object.keys(input).length === 0) {
      throw new UsageError('give at least one of --name, --amount, --supply, --per-member, --start, --end');
    }
    const checked = updateDropRequestSchema.safeParse(input);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      throw new UsageError(`invalid drop change: ${issue?.path.join('.')}: ${issue?.message}`);
    }
    const drop = await context.client().updateDrop(brandId, dropId, checked.data);
    if (flags.json) return context.printJson(drop);
    printDrop(context.print, 'Updated', drop);
  },
};

/** `pts drop end`. */
export const endDropCommand: CliCommand = {
  usage: 'pts drop end --brand ID --drop ID [--json]',
  summary: 'end a drop now: claims from now on are refused, what was claimed stays paid',
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, drop: { type: 'string' }, ...jsonOption });
    const drop = await context.client().endDrop(requireFlag(flags.brand, 'brand'), requireFlag(flags.drop, 'drop'));
    if (flags.json) return context.printJson(drop);
    printDrop(context.print, 'Ended', drop);
  },
};

function printDrop(print: (line: string) => void, what: string, drop: Drop) {
  print(`${what} drop ${drop.dropId} (${drop.name}): ${drop.amount} pts, ${drop.claimed}/${drop.totalSupply} claimed`);
  print(`  ${drop.startsAt} → ${drop.endsAt}, at most ${drop.perUserLimit} per member`);
}

function parseDate(value: string, flag: string): string {
  const time = Date.parse(value);
  if (Number.isNaN(time) || !/^\d{4}-\d{2}-\d{2}/.test(value)) {
    throw new UsageError(`--${flag} must be an ISO 8601 date-time such as 2026-12-01T00:00:00Z, got "${value}"`);
  }
  return new Date(time).toISOString();
}
