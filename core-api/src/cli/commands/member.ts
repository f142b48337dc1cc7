import { MANUAL_AWARD_MAX } from '@pts/shared';
import { type CliCommand, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, requireFlag } from '../flags.ts';

/** `pts member award`: the portal's manual award (Members page) from the CLI, audited as the admin token. */
export const awardMemberCommand: CliCommand = {
  usage: 'pts member award --brand ID --member EMAIL|IDENTITY --amount N --reason TEXT [--json]',
  summary:
    'give a member pts by hand with the reason why (a manual_award event, minted like every reward; the member is an e-mail, discord:123 or an identity key)',
  async run(args, context) {
    const flags = parseFlags(args, {
      brand: { type: 'string' },
      member: { type: 'string' },
      amount: { type: 'string' },
      reason: { type: 'string' },
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
    const award = await context.client().awardMember(brandId, { member, amount, reason });
    if (flags.json) return context.printJson(award);
    context.print(`Awarded ${award.rewardAmount} pts to ${member} (${award.walletAddress})`);
    context.print(`  event  ${award.eventId}`);
    context.print(`  mint   ${award.mintStatus}`);
  },
};
