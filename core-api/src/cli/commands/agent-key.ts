import type { AgentKey, CreateAgentKeyRequest } from '@pts/shared';
import { type CliCommand, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, requireFlag } from '../flags.ts';
import { formatTable } from '../table.ts';

const TIERS = ['free', 'pro', 'enterprise'] as const;

/** `pts agent-key create`: a key AI clients sign agent API requests with (docs/agent-api.md, "Keys"). */
export const createAgentKeyCommand: CliCommand = {
  usage:
    'pts agent-key create --name NAME [--brand ID]… [--can-manage-program] [--can-onboard] [--tier free|pro|enterprise] [--rate-per-minute N] [--json]',
  summary: 'create an agent API key; prints its key id and secret (the secret is shown once)',
  async run(args, context) {
    const flags = parseFlags(args, {
      name: { type: 'string' },
      brand: { type: 'string', multiple: true },
      'can-manage-program': { type: 'boolean' },
      'can-onboard': { type: 'boolean' },
      tier: { type: 'string' },
      'rate-per-minute': { type: 'string' },
      ...jsonOption,
    });
    const input: CreateAgentKeyRequest = { name: requireFlag(flags.name, 'name') };
    if (flags.brand?.length) input.brandIds = flags.brand.map((brand) => brand.trim());
    if (flags['can-manage-program']) input.canManageProgram = true;
    if (flags['can-onboard']) input.canOnboard = true;
    if (flags.tier !== undefined) {
      const tier = flags.tier.trim() as (typeof TIERS)[number];
      if (!TIERS.includes(tier)) throw new UsageError(`--tier must be free, pro or enterprise, got "${flags.tier}"`);
      input.tier = tier;
    }
    if (flags['rate-per-minute'] !== undefined) {
      const rate = /^\d+$/.test(flags['rate-per-minute'].trim()) ? Number(flags['rate-per-minute']) : Number.NaN;
      if (!Number.isSafeInteger(rate) || rate < 1) {
        throw new UsageError(`--rate-per-minute must be a whole number ≥ 1, got "${flags['rate-per-minute']}"`);
      }
      input.ratePerMinute = rate;
    }
    const created = await context.client().createAgentKey(input);
    if (flags.json) return context.printJson(created);
    context.print(`Created agent key ${input.name}`);
    context.print(`  key id: ${created.keyId}`);
    context.print(`  secret: ${created.secret}`);
    context.print('Keep the secret now: it is not shown again. Sign requests as docs/agent-api.md describes.');
  },
};

/** `pts agent-key list`: every key (revoked ones too), never a secret. */
export const listAgentKeysCommand: CliCommand = {
  usage: 'pts agent-key list [--json]',
  summary: 'list agent API keys (never their secrets)',
  async run(args, context) {
    const flags = parseFlags(args, jsonOption);
    const keys = await context.client().listAgentKeys();
    if (flags.json) return context.printJson(keys);
    if (keys.length === 0)
      return context.print('No agent keys. Create one: npm run -s pts -- agent-key create --name NAME');
    context.print(
      formatTable(['KEY ID', 'NAME', 'TIER', 'RATE/MIN', 'PERMISSIONS', 'BRANDS', 'STATUS'], keys.map(row)),
    );
  },
};

function row(key: AgentKey): string[] {
  const permissions = [key.canManageProgram && 'manage', key.canOnboard && 'onboard'].filter(Boolean).join(',');
  return [
    key.keyId,
    key.name,
    key.tier,
    String(key.ratePerMinute),
    permissions || '-',
    key.brandIds.join(',') || '-',
    key.revokedAt ? `revoked ${key.revokedAt}` : 'active',
  ];
}

/** `pts agent-key revoke KEYID`: the key's signatures are refused from now on. */
export const revokeAgentKeyCommand: CliCommand = {
  usage: 'pts agent-key revoke KEYID [--json]',
  summary: 'revoke an agent API key',
  async run(args, context) {
    const positional = args.filter((arg) => !arg.startsWith('--'));
    const flags = parseFlags(
      args.filter((arg) => arg.startsWith('--')),
      jsonOption,
    );
    if (positional.length !== 1) throw new UsageError('give exactly one key id: pts agent-key revoke ak_…');
    const result = await context.client().revokeAgentKey(positional[0]!.trim());
    if (flags.json) return context.printJson(result);
    context.print(
      result.revoked ? `Revoked agent key ${result.keyId}` : `Agent key ${result.keyId} was already revoked`,
    );
  },
};
