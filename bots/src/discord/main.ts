import { startDiscordBot } from './app.ts';
import { loadDiscordConfig } from './config.ts';

// `npm run bot:discord` (node --import tsx bots/src/discord/main.ts): reads the environment (docs/bots.md),
// connects to the gateway, serves GET /health on HEALTH_PORT, stops gracefully on SIGINT/SIGTERM.
try {
  const running = await startDiscordBot(loadDiscordConfig());
  const shutdown = () => {
    running.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
