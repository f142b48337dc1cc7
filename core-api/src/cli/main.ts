import { runCli } from './run-cli.ts';

// The `pts` command: `npm run -s pts -- <command>`. All logic lives in runCli so tests run it in-process.
process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
});
