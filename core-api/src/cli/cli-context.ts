import type { AdminClient } from '@pts/shared';

/** Where the CLI writes; `process.stdout` in production, a collector in tests. */
export interface TextSink {
  write(text: string): unknown;
}

/** Everything `runCli` touches outside itself. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: TextSink;
  stderr: TextSink;
  fetch?: typeof fetch;
  /** Directory a relative `PTS_DATA_DIR` is resolved against; the process's cwd when absent. */
  cwd?: string;
}

/** What a command receives besides its arguments. */
export interface CommandContext {
  /** The admin client; resolving the admin token happens on first use, after the flags were checked. */
  client(): AdminClient;
  /** Writes one line to stdout. */
  print(line: string): void;
  /** Writes one JSON value to stdout; the only stdout output of a `--json` command. */
  printJson(value: unknown): void;
  /** Writes a progress line to stderr (never stdout, so a `--json` answer stays the only JSON there). */
  progress(line: string): void;
}

/** One `pts <group> <action>` command. */
export interface CliCommand {
  /** Synopsis shown in help and after a usage error. */
  usage: string;
  summary: string;
  run(args: string[], context: CommandContext): Promise<void>;
}

/** Bad flags or values: exit code 2 with the command's usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A problem the user fixes outside the command line (token, URL): exit code 1. */
export class CliError extends Error {
  override readonly name = 'CliError';
}
