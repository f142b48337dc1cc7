import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Appends `start <file>` and `end <file>` lines to $PTS_TEST_PROGRESS_FILE as test files begin and finish,
 * so scripts/test-all.sh can name the files still running when a run overstays its time limit.
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
}
