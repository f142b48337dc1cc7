import { PORTAL_ROLES, type PortalRole } from '@pts/shared';
import { type CliCommand, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, requireEmailFlag, requireFlag } from '../flags.ts';

/**
 * `pts portal invite`: a single-use link that sets a person's password and signs them into a brand's portal,
 * or, with `--operator`, makes them a platform operator (every brand; create brands, invite their owners).
 */
export const portalInviteCommand: CliCommand = {
  usage: 'pts portal invite (--brand ID --email E --role owner|admin|viewer | --operator --email E) [--json]',
  summary:
    'invite a person into a brand portal, or as a platform operator with --operator (the link works once, for 72 h; e-mailed when PTS_SMTP_URL is set)',
  async run(args, context) {
    const flags = parseFlags(args, {
      brand: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      operator: { type: 'boolean' },
      ...jsonOption,
    });
    if (flags.operator) {
      if (flags.brand !== undefined || flags.role !== undefined) {
        throw new UsageError('--operator invites an operator of every brand: leave out --brand and --role');
      }
      const email = requireEmailFlag(flags.email, 'email');
      const invite = await context.client().invitePortalOperator({ email });
      if (flags.json) return context.printJson(invite);
      context.print(`Invited ${invite.email} as a platform operator`);
      context.print(`  link     ${invite.inviteUrl}`);
      context.print(`  expires  ${invite.expiresAt} (works once)`);
      return;
    }
    const brandId = requireFlag(flags.brand, 'brand');
    const email = requireEmailFlag(flags.email, 'email');
    const role = requireFlag(flags.role, 'role');
    if (!(PORTAL_ROLES as readonly string[]).includes(role)) {
      throw new UsageError(`--role must be one of ${PORTAL_ROLES.join(', ')} (got "${role}")`);
    }
    const invite = await context.client().invitePortalMember({ brandId, email, role: role as PortalRole });
    if (flags.json) return context.printJson(invite);
    context.print(`Invited ${invite.email} as ${invite.role} of ${invite.brandId}`);
    context.print(`  link     ${invite.inviteUrl}`);
    context.print(`  expires  ${invite.expiresAt} (works once)`);
  },
};

/** `pts portal remove-operator`: the operator flag goes (and pending operator invites with it). */
export const portalRemoveOperatorCommand: CliCommand = {
  usage: 'pts portal remove-operator --email E [--json]',
  summary:
    "take a person's platform operator flag (their next portal request lacks it; brand memberships stay) and revoke their pending operator invites",
  async run(args, context) {
    const flags = parseFlags(args, { email: { type: 'string' }, ...jsonOption });
    const email = requireEmailFlag(flags.email, 'email');
    const removed = await context.client().removePortalOperator({ email });
    if (flags.json) return context.printJson(removed);
    context.print(
      removed.wasOperator
        ? `${removed.email} is no longer a platform operator`
        : `${removed.email} was not an operator yet: the pending invite is revoked`,
    );
    if (removed.invitesRevoked > 0) context.print(`  ${removed.invitesRevoked} pending operator invite(s) revoked`);
  },
};
