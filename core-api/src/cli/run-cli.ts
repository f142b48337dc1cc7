import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type AdminClient, CoreApiError, createAdminClient } from '@pts/shared';
import { type CliCommand, CliError, type CliIo, type CommandContext, UsageError } from './cli-context.ts';
import { createAgentKeyCommand, listAgentKeysCommand, revokeAgentKeyCommand } from './commands/agent-key.ts';
import {
  createBrandCommand,
  endOldBrandKeyCommand,
  listBrandsCommand,
  removeBrandDomainCommand,
  rotateBrandKeyCommand,
  setBrandCommand,
} from './commands/brand.ts';
import { createCampaignCommand, listCampaignsCommand } from './commands/campaign.ts';
import { endDropCommand, listDropsCommand, updateDropCommand } from './commands/drop.ts';
import { listLeadsCommand } from './commands/lead.ts';
import { awardMemberCommand, deductMemberCommand } from './commands/member.ts';
import {
  archivePerkCommandOf,
  createPerkCommand,
  listPerksCommand,
  perkConstraintCommand,
  updatePerkCommand,
} from './commands/perk.ts';
import { portalInviteCommand, portalRemoveOperatorCommand } from './commands/portal.ts';
import { listPurchasesCommand } from './commands/purchase.ts';
import { setReferralsCommand, showReferralsCommand } from './commands/referrals.ts';
import { relayerGasCommand } from './commands/relayer.ts';
import { createReversalCommand } from './commands/reversal.ts';
import { archiveRuleCommandOf, listRulesCommand, setRuleCommand } from './commands/rule.ts';
import { connectShopifyCommand, disconnectShopifyCommand, shopifyDeliveriesCommand } from './commands/shopify.ts';
import { simulateCommand } from './commands/simulate.ts';
import { setTiersCommand, showTiersCommand } from './commands/tiers.ts';
import { userTokenCommand } from './commands/user.ts';
import {
  listWebhookDeliveriesCommand,
  replayWebhookCommand,
  setWebhookCommand,
  testWebhookCommand,
} from './commands/webhook.ts';

const DEFAULT_URL = 'http://127.0.0.1:3000';
const DEFAULT_DATA_DIR = '.pts-data';

/** Every command, by group and action. */
const commands: Record<string, Record<string, CliCommand>> = {
  brand: {
    create: createBrandCommand,
    set: setBrandCommand,
    list: listBrandsCommand,
    'rotate-key': rotateBrandKeyCommand,
    'end-old-key': endOldBrandKeyCommand,
    'remove-domain': removeBrandDomainCommand,
  },
  'agent-key': { create: createAgentKeyCommand, list: listAgentKeysCommand, revoke: revokeAgentKeyCommand },
  rule: {
    set: setRuleCommand,
    list: listRulesCommand,
    archive: archiveRuleCommandOf(true),
    restore: archiveRuleCommandOf(false),
  },
  purchase: { list: listPurchasesCommand },
  perk: {
    create: createPerkCommand,
    update: updatePerkCommand,
    archive: archivePerkCommandOf(true),
    restore: archivePerkCommandOf(false),
    list: listPerksCommand,
    constraint: perkConstraintCommand,
  },
  user: { token: userTokenCommand },
  campaign: { create: createCampaignCommand, list: listCampaignsCommand },
  drop: { list: listDropsCommand, update: updateDropCommand, end: endDropCommand },
  relayer: { gas: relayerGasCommand },
  lead: { list: listLeadsCommand },
  portal: { invite: portalInviteCommand, 'remove-operator': portalRemoveOperatorCommand },
  member: { award: awardMemberCommand, deduct: deductMemberCommand },
  shopify: {
    connect: connectShopifyCommand,
    disconnect: disconnectShopifyCommand,
    deliveries: shopifyDeliveriesCommand,
  },
  reversal: { create: createReversalCommand },
  tiers: { set: setTiersCommand, show: showTiersCommand },
  referrals: { set: setReferralsCommand, show: showReferralsCommand },
  // A group of one command, run without an action: `pts simulate --brand ID …`.
  simulate: { '': simulateCommand },
  webhook: {
    set: setWebhookCommand,
    test: testWebhookCommand,
    deliveries: listWebhookDeliveriesCommand,
    replay: replayWebhookCommand,
  },
};

/** The `pts help` text. */
export function usageText(): string {
  const lines = ['Usage: pts <command> [flags]', '', 'Commands:'];
  for (const group of Object.values(commands)) {
    for (const command of Object.values(group)) lines.push(`  ${command.usage}`, `      ${command.summary}`);
  }
  lines.push(
    '  pts help',
    '',
    'Environment:',
    `  PTS_URL          core-api address (default ${DEFAULT_URL})`,
    `  PTS_ADMIN_TOKEN  admin token; when unset it is read from <PTS_DATA_DIR>/admin-token`,
    `  PTS_DATA_DIR     data directory of \`npm start\` (default ${DEFAULT_DATA_DIR})`,
    '',
    'With --json a command prints exactly one JSON object on stdout.',
    'Exit codes: 0 success, 1 the request failed (message on stderr), 2 invalid command line.',
  );
  return lines.join('\n');
}

/** Runs one `pts` command line; returns the exit code instead of exiting so tests can call it in-process. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [group, ...rest] = argv;
  // A group whose command has no action name (`pts simulate --brand …`) takes every argument as its flags.
  const actionless = group !== undefined && commands[group]?.[''] !== undefined;
  const [action, ...args] = actionless ? ['', ...rest] : rest;
  if (group === undefined) return usageError(io, 'no command given');
  if (group === 'help' || group === '--help' || group === '-h') {
    io.stdout.write(`${usageText()}\n`);
    return 0;
  }
  const actions = commands[group];
  if (!actions) return usageError(io, `unknown command "${group}"`);
  const groupUsage = Object.values(actions)
    .map((command) => command.usage)
    .join('\n       ');
  if (action === '--help' || action === '-h' || (actionless && (rest[0] === '--help' || rest[0] === '-h'))) {
    io.stdout.write(`usage: ${groupUsage}\n`);
    return 0;
  }
  const command = action === undefined ? undefined : actions[action];
  if (!command) {
    const problem = action === undefined ? `"${group}" needs an action` : `unknown action "${group} ${action}"`;
    return usageError(io, problem, groupUsage);
  }
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(`usage: ${command.usage}\n`);
    return 0;
  }

  const baseUrl = io.env.PTS_URL?.trim() || DEFAULT_URL;
  try {
    await command.run(args, createContext(io, baseUrl));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) return usageError(io, error.message, command.usage);
    io.stderr.write(`pts: ${describeFailure(error, baseUrl)}\n`);
    return 1;
  }
}

function createContext(io: CliIo, baseUrl: string): CommandContext {
  let client: AdminClient | undefined;
  return {
    client() {
      if (!client) {
        if (!URL.canParse(baseUrl)) throw new CliError(`PTS_URL "${baseUrl}" is not a URL; use e.g. ${DEFAULT_URL}`);
        const options = { baseUrl, adminToken: readAdminToken(io) };
        client = createAdminClient(io.fetch ? { ...options, fetch: io.fetch } : options);
      }
      return client;
    },
    print: (line) => io.stdout.write(`${line}\n`),
    printJson: (value) => io.stdout.write(`${JSON.stringify(value, null, 2)}\n`),
    progress: (line) => io.stderr.write(`${line}\n`),
  };
}

/** PTS_ADMIN_TOKEN, else the token file `npm start` writes into its data directory. */
function readAdminToken(io: CliIo): string {
  const fromEnv = io.env.PTS_ADMIN_TOKEN?.trim();
  if (fromEnv) return fromEnv;
  const cwd = io.cwd ?? process.cwd();
  const dataDir = io.env.PTS_DATA_DIR?.trim();
  const candidates = dataDir
    ? [resolve(cwd, dataDir, 'admin-token')]
    : // `npm start` runs inside the core-api workspace, so its default data dir is core-api/.pts-data
      // while `npm run pts` runs at the repository root.
      [resolve(cwd, DEFAULT_DATA_DIR, 'admin-token'), resolve(cwd, 'core-api', DEFAULT_DATA_DIR, 'admin-token')];
  for (const path of candidates) {
    const token = readTokenFile(path);
    if (token) return token;
  }
  throw new CliError(
    `no admin token: set PTS_ADMIN_TOKEN, or start the server once (\`npm start\`) so it writes ` +
      `${candidates.join(' or ')} (set PTS_DATA_DIR if the server uses another data directory)`,
  );
}

function readTokenFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(`cannot read the admin token file ${path}: ${(error as Error).message}`);
  }
}

function describeFailure(error: unknown, baseUrl: string): string {
  if (error instanceof CoreApiError) {
    if (error.code === 'UNREACHABLE') {
      const reason = typeof error.details?.reason === 'string' ? ` (${error.details.reason})` : '';
      return `cannot reach core-api at ${baseUrl}${reason}: is \`npm start\` running? Set PTS_URL if it listens elsewhere`;
    }
    if (error.code === 'TIMEOUT') return `core-api at ${baseUrl} did not answer in time: is it overloaded or stuck?`;
    return `${oneLine(error.message)} [${error.code}]`;
  }
  if (error instanceof CliError) return oneLine(error.message);
  return `unexpected error: ${oneLine(error instanceof Error ? error.message : String(error))}`;
}

function usageError(io: CliIo, problem: string, usage?: string): number {
  io.stderr.write(`pts: ${problem}\n`);
  io.stderr.write(usage ? `usage: ${usage}\nRun \`pts help\` for all commands.\n` : `${usageText()}\n`);
  return 2;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}
