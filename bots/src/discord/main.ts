import { runBot } from '../run-bot.ts';
import { startDiscordBot } from './app.ts';
import { loadDiscordConfig } from './config.ts';

// `npm run bot:discord` (node --import tsx bots/src/discord/main.ts): reads the environment (docs/bots.md),
// connects to the gateway, serves GET /health on HEALTH_PORT, stops gracefully on SIGINT/SIGTERM.
await runBot(() => startDiscordBot(loadDiscordConfig()));
