import type { CliCommand } from '../cli-context.ts';
import { jsonOption, parseFlags, requireEmailFlag } from '../flags.ts';

/** `pts user token`: an access token for a user (created with its wallet when absent). */
export const userTokenCommand: CliCommand = {
  usage: 'pts user token --email EMAIL [--json]',
  summary: 'issue an access token for the user with this email (creates the user and wallet if absent)',
  async run(args, context) {
    const flags = parseFlags(args, { email: { type: 'string' }, ...jsonOption });
    const email = requireEmailFlag(flags.email, 'email');
    const issued = await context.client().issueUserToken(email);
    if (flags.json) return context.printJson(issued);
    context.print(`Access token for ${email.toLowerCase()}`);
    context.print(`  wallet      ${issued.walletAddress}`);
    context.print(`  expires at  ${issued.expiresAt}`);
    context.print(`  token       ${issued.token}`);
  },
};
