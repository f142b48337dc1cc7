import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

type UnhandledErrors = Parameters<NonNullable<Reporter['onTestRunEnd']>>[1];

/**
 * Appends `start <file>` and `end <file>` lines to $PTS_TEST_PROGRESS_FILE as test files begin and finish,
 * so scripts/test-all.sh can name the files still running when a run overstays its time limit; and, at the
 * end of the run, one `unhandled <file> <message>` line per unhandled error (an error thrown outside any test,
 * which fails the run without failing a test), so the summary names where it came from.
 */
export default class ProgressReporter implements Reporter {
  private readonly file = process.env.PTS_TEST_PROGRESS_FILE;

  private write(what: string, module: TestModule): void {
    if (this.file) appendFileSync(this.file, `${what} ${new Date().toISOString()} ${module.moduleId}\n`);
  }

  onTestModuleStart(module: TestModule): void {
    this.write('start', module);
  }

  onTestModuleEnd(module: TestModule): void {
    this.write('end', module);
  }

  onTestRunEnd(_modules: ReadonlyArray<TestModule>, unhandledErrors: UnhandledErrors): void {
    if (!this.file) return;
    for (const error of unhandledErrors) {
      const where =
        [error.VITEST_TEST_PATH, error.VITEST_TEST_NAME]
          .filter((part) => typeof part === 'string' && part)
          .join(' > ') || '(no test file)';
      const message = `${error.name ?? 'Error'}: ${error.message}`.replace(/\s+/g, ' ').slice(0, 300);
      const frame = (error.stack ?? '')
        .split('\n')
        .find((line) => line.includes('/src/') || line.includes('/test/'))
        ?.trim();
      appendFileSync(this.file, `unhandled ${where} ${message}${frame ? ` ${frame}` : ''}\n`);
    }
  }
}
