import type { AdminReversalRequest, ReversalResponse } from '@pts/shared';
import { type CliCommand, type CommandContext, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, requireFlag } from '../flags.ts';

const options = {
  brand: { type: 'string' },
  'reversal-id': { type: 'string' },
  'event-id': { type: 'string' },
  'event-type': { type: 'string' },
  'external-id': { type: 'string' },
  amount: { type: 'string' },
  currency: { type: 'string' },
  ...jsonOption,
} as const;

type Flags = ReturnType<typeof parseFlags<typeof options>>;

/** The event named once (by id, or by type and external id) and the refunded value, checked before any request. */
function requestOf(flags: Flags): AdminReversalRequest {
  const reversalId = requireFlag(flags['reversal-id'], 'reversal-id');
  const byExternal = flags['event-type'] !== undefined || flags['external-id'] !== undefined;
  if (flags['event-id'] !== undefined && byExternal) {
    throw new UsageError('name the event either by --event-id or by --event-type and --external-id, not both');
  }
  const event = byExternal
    ? {
        eventType: requireFlag(flags['event-type'], 'event-type'),
        externalId: requireFlag(flags['external-id'], 'external-id'),
      }
    : { eventId: requireFlag(flags['event-id'], 'event-id (or --event-type and --external-id)') };
  if ((flags.amount === undefined) !== (flags.currency === undefined)) {
    throw new UsageError(
      flags.amount === undefined
        ? '--currency goes with --amount: give the refunded amount too, or leave both out to reverse it all'
        : '--amount needs --currency (the event’s currency, e.g. USD), or leave both out to reverse it all',
    );
  }
  const value = flags.amount === undefined ? {} : { value: { amount: flags.amount, currency: flags.currency } };
  return { reversalId, ...event, ...value } as AdminReversalRequest;
}

function printReversal(context: CommandContext, reversal: ReversalResponse): void {
  const refunded = reversal.refunded ? `${reversal.refunded.amount} ${reversal.refunded.currency} refunded` : 'in full';
  const again = reversal.duplicate ? ' (already applied: nothing more taken)' : '';
  context.print(
    `Reversal ${reversal.reversalId} of ${reversal.eventType} event ${reversal.eventId} (${refunded})${again}`,
  );
  context.print(`  takes back ${reversal.requested} pts, status ${reversal.status}`);
  if (reversal.taken !== null) context.print(`  burned ${reversal.taken} pts, debt ${reversal.debt ?? 0} pts`);
  if (reversal.transactionHash) context.print(`  transaction ${reversal.transactionHash}`);
}

/** `pts reversal create`: reverse an event's reward in full or in part (a refund), the reversalId applied once. */
export const createReversalCommand: CliCommand = {
  usage:
    'pts reversal create --brand ID --reversal-id R (--event-id E | --event-type T --external-id X) [--amount 12.50 --currency USD] [--json]',
  summary:
    "take back an event's reward, all of it or the share of a refunded amount; the same --reversal-id again is applied once",
  async run(args, context) {
    const flags = parseFlags(args, options);
    const brandId = requireFlag(flags.brand, 'brand');
    const reversal = await context.client().reverseEvent(brandId, requestOf(flags));
    if (flags.json) return context.printJson(reversal);
    printReversal(context, reversal);
  },
};
