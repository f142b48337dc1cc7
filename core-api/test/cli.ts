import { runCli } from '../src/cli/run-cli.ts';
import type { TestPlatform } from './platform.ts';

/** Runs `pts <argv>` in-process against the test platform with its admin token: exit code, stdout, stderr. */
export async function runPts(platform: TestPlatform, argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}
