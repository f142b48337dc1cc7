import { runBot } from '../run-bot.ts';
import { startXBot } from './app.ts';
import { loadXBotConfig } from './config.ts';

// `npm run bot:x`: one process per brand (docs/bots.md, "X"). The environment is checked before anything
// is written or served: a missing variable is named, and the process exits 1.
await runBot(() => startXBot(loadXBotConfig(process.env)));
