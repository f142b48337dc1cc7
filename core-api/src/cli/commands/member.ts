import { randomUUID } from 'node:crypto';
import { idempotencyKeySchema, MANUAL_AWARD_MAX } from '@pts/shared';
import { type CliCommand, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, requireFlag } from '../flags.ts';

/** `pts member award`: the portal's manual award (Members page) from the CLI, audited as the admin token. */
export const awardMemberCommand: CliCommand = {
  usage:
    'pts member award --brand ID --member EMAIL|IDENTITY --amount N --reason TEXT [--idempotency-key KEY] [--json]',
  summary:
    'give a member pts by hand with the reason why (a manual_award event, minted like every reward; the member is an e-mail, discord:123 or an identity key). One award per --idempotency-key (default: a new uuid per run): run again with the same key and nothing more is paid',
  async run(args, context) {
    const flags = parseFlags(args, {
      brand: { type: 'string' },
      member: { type: 'string' },
      amount: { type: 'string' },
      reason: { type: 'string' },
      'idempotency-key': { type: 'string' },
      ...jsonOption,
    });
    const brandId = requireFlag(flags.brand, 'brand');
    const member = requireFlag(flags.member, 'member');
    const amountText = requireFlag(flags.amount, 'amount');
    const reason = requireFlag(flags.reason, 'reason');
    const amount = /^\d+$/.test(amountText) ? Number(amountText) : Number.NaN;
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > MANUAL_AWARD_MAX) {
      throw new UsageError(`--amount must be a whole number of pts from 1 to ${MANUAL_AWARD_MAX}, got "${amountText}"`);
    }
    const key = idempotencyKeySchema.safeParse(flags['idempotency-key'] ?? randomUUID());
    if (!key.success) throw new UsageError(`--idempotency-key ${key.error.issues[0]?.message ?? 'is invalid'}`);
    const award = await context.client().awardMember(brandId, { member, amount, reason, idempotencyKey: key.data });
    if (flags.json) return context.printJson(award);
    context.print(
      award.replayed
        ? `Already awarded with this idempotency key: ${award.rewardAmount} pts to ${member} (${award.walletAddress}); nothing new was paid`
        : `Awarded ${award.rewardAmount} pts to ${member} (${award.walletAddress})`,
    );
    context.print(`  event  ${award.eventId}`);
    context.print(`  mint   ${award.mintStatus}`);
  },
};

/**
 * `pts member deduct`: the portal's manual deduction (Members page) from the CLI, a reversal of kind
 * `deduction` burned on chain, audited as the admin token.
 */
export const deductMemberCommand: CliCommand = {
  usage:
    'pts member deduct --brand ID --member EMAIL|IDENTITY --amount N --reason TEXT [--idempotency-key KEY] [--json]',
  summary:
    'take pts back from a member by hand with the reason why (a reversal of kind deduction, burned on chain; at most what the member holds spendable: not a refund). One deduction per --idempotency-key (default: a new uuid per run)',
  async run(args, context) {
    const flags = parseFlags(args, {
      brand: { type: 'string' },
      member: { type: 'string' },
      amount: { type: 'string' },
      reason: { type: 'string' },
      'idempotency-key': { type: 'string' },
      ...jsonOption,
    });
    const brandId = requireFlag(flags.brand, 'brand');
    const member = requireFlag(flags.member, 'member');
    const amountText = requireFlag(flags.amount, 'amount');
    const reason = requireFlag(flags.reason, 'reason');
    const amount = /^\d+$/.test(amountText) ? Number(amountText) : Number.NaN;
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > MANUAL_AWARD_MAX) {
      throw new UsageError(`--amount must be a whole number of pts from 1 to ${MANUAL_AWARD_MAX}, got "${amountText}"`);
    }
    const key = idempotencyKeySchema.safeParse(flags['idempotency-key'] ?? randomUUID());
    if (!key.success) throw new UsageError(`--idempotency-key ${key.error.issues[0]?.message ?? 'is invalid'}`);
    const answer = await context.client().deductMember(brandId, { member, amount, reason, idempotencyKey: key.data });
    if (flags.json) return context.printJson(answer);
    const { deduction } = answer;
    context.print(
      answer.replayed
        ? `Already deducted with this idempotency key: ${deduction.requested} pts from ${member}; nothing more was taken`
        : `Deducted ${deduction.requested} pts from ${member}`,
    );
    context.print(`  reversal  ${deduction.reversalId}`);
    context.print(
      `  chain     ${deduction.status}${deduction.taken === null ? '' : ` (burned ${deduction.taken}, owed ${deduction.debt})`}`,
    );
  },
};
