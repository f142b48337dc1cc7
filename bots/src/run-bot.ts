/**
 * The entry point every bot's `main.ts` shares: starts it, stops it gracefully on SIGINT/SIGTERM (exit 0,
 * or 1 when stopping fails), and turns a start-up error (a missing variable, named) into a message and exit 1.
 */
export async function runBot(start: () => Promise<{ stop(): Promise<void> }>): Promise<void> {
  try {
    const running = await start();
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
}
