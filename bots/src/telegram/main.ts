import { loadBotConfig } from '../config.ts';
import { startTelegramBot } from './app.ts';

// `npm run bot:telegram`: reads the environment (docs/bots.md), starts polling or the webhook server.
try {
  const config = loadBotConfig(process.env, {
    required: [{ name: 'TELEGRAM_BOT_TOKEN', hint: 'create a bot with @BotFather (docs/bots.md)' }],
  });
  const running = await startTelegramBot(config);
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
