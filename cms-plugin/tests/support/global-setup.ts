import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The plugin's folder (cms-plugin/). */
export const PLUGIN_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The installable zip `npm run build` makes. */
export const PLUGIN_ZIP = join(PLUGIN_DIR, 'pts-loyalty.zip');

const SOURCES = ['src', 'includes', 'assets', 'pts-loyalty.php', 'uninstall.php', 'package.json', 'package-lock.json'];

function newestChange(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestChange(join(path, name))));
}

/**
 * Builds the plugin zip the tests install (blocks with @wordpress/scripts, then `wp-scripts plugin-zip`).
 * @wordpress/scripts is large, so it has its own lockfile and is installed here, only when missing; the
 * build is skipped when the zip is newer than every source.
 */
export default function setup(): void {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const run = (args: string[]) =>
    execFileSync(npm, args, { cwd: PLUGIN_DIR, stdio: ['ignore', 'ignore', 'inherit'], env: process.env });
  if (!existsSync(join(PLUGIN_DIR, 'node_modules', '.bin', 'wp-scripts'))) {
    console.log('cms-plugin: installing @wordpress/scripts (own lockfile, once)…');
    run(['ci', '--no-audit', '--no-fund', '--ignore-scripts']);
  }
  const sourcesChanged = Math.max(...SOURCES.map((name) => newestChange(join(PLUGIN_DIR, name))));
  if (!existsSync(PLUGIN_ZIP) || statSync(PLUGIN_ZIP).mtimeMs < sourcesChanged) {
    console.log('cms-plugin: building the blocks and the plugin zip…');
    run(['run', 'build']);
  }
}
