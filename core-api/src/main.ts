import { ensurePortalBuild } from '@pts/portal/build';
import { hasRole, loadConfig } from './config.ts';
import { inviteMember } from './modules/portal/portal-team.service.ts';
import { ensureDemoBrand } from './startup/demo-seed.ts';
import { startPlatform } from './startup/platform.ts';

/** `npm start`: parse env → build deps → create app → listen, then print how to earn a first reward. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
  // The brand portal's pages, built by Vite when missing or older than their sources (a few seconds, once).
  if (hasRole(config, 'admin') && !config.PTS_PORTAL_DIR) {
    await ensurePortalBuild({ log: (line) => console.log(line) }).catch((error: unknown) => {
      console.error(`The brand portal failed to build; /portal answers 503: ${(error as Error).message}`);
    });
  }
  const platform = await startPlatform(config);
  const { deps, url } = platform;
  // Build the browser SDK now (~50 ms) so the first /sdk.js is served at once and a broken build shows here.
  if (hasRole(config, 'event-handler')) {
    await platform.services.sdk.load().catch((error: unknown) => {
      deps.logger.error({ err: error }, 'the browser SDK failed to build; /sdk.js answers 503');
    });
  }
  const lines = [
    '',
    `pts core-api is running (${deps.dbKind}, chain ${deps.chain.chainId} at ${deps.chain.rpcUrl})`,
    `  API        ${url}/pts-api`,
    `  API docs   ${url}/docs`,
    `  health     ${url}/health`,
    `  metrics    ${url}/metrics`,
    `  sdk        ${url}/sdk.js`,
    ...(hasRole(config, 'admin') ? [`  portal     ${url}/portal/`] : []),
    `  token      ${deps.chain.contracts.rewardToken}`,
    `  data dir   ${config.PTS_DATA_DIR}`,
  ];
  if (config.PTS_SEED_DEMO) {
    const demo = await ensureDemoBrand(
      { db: deps.db, secrets: deps.secrets, clock: deps.clock, changes: platform.changes, actor: 'seed' },
      config.PTS_DATA_DIR,
    );
    const body = JSON.stringify({
      brandId: demo.brandId,
      eventType: 'account_creation',
      userEmail: 'alice@example.com',
      domain: 'localhost',
    });
    lines.push(
      '',
      `Demo brand ${demo.brandId}${demo.created ? ' (created now)' : ''}, domain localhost`,
      `  security key ${demo.securityKey}   (kept in ${config.PTS_DATA_DIR}/demo-brand.json)`,
      '',
      'Earn a reward (change the email to earn again):',
      `  curl -s -X POST ${url}/pts-api/manual-event -H 'Content-Type: application/json' -d '${body}'`,
      '',
      `Admin CLI: npm run -s pts -- brand list   (admin token in ${config.PTS_DATA_DIR}/admin-token)`,
    );
    // On the demo brand's first start, its owner's way into the portal: one click after `npm start`.
    if (demo.created && hasRole(config, 'admin')) {
      const invite = await inviteMember(
        { db: deps.db, clock: deps.clock, mailer: platform.services.portalMailer },
        { brandId: demo.brandId, email: 'demo@localhost', role: 'owner', invitedBy: 'seed', baseUrl: url },
      );
      lines.push(
        '',
        'Brand portal: open this link to set the password of demo@localhost (owner of the demo brand):',
        `  ${invite.inviteUrl}`,
        `  (works once, until ${invite.expiresAt}; if demo@localhost already has an account, sign in on that page and accept;`,
        `  later: npm run -s pts -- portal invite --brand ${demo.brandId} --email E --role owner)`,
      );
    }
  }
  console.log(lines.join('\n'));

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.logger.info({ signal }, 'shutting down');
    await platform.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((error) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
