import { startXBot } from './app.ts';
import { loadXBotConfig } from './config.ts';

// `npm run bot:x`: one process per brand (docs/bots.md, "X"). The environment is checked before anything
// is written or served: a missing variable is named, and the process exits 1.
try {
  const config = loadXBotConfig(process.env);
  const running = await startXBot(config);
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
