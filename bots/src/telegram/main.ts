import { loadBotConfig } from '../config.ts';
import { runBot } from '../run-bot.ts';
import { startTelegramBot } from './app.ts';

// `npm run bot:telegram`: reads the environment (docs/bots.md), starts polling or the webhook server.
await runBot(() =>
  startTelegramBot(
    loadBotConfig(process.env, {
      required: [{ name: 'TELEGRAM_BOT_TOKEN', hint: 'create a bot with @BotFather (docs/bots.md)' }],
      bot: 'telegram',
    }),
  ),
);
