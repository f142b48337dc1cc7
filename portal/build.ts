import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// Builds the brand portal with Vite into dist/ when the build is missing or older than its sources, so
// `npm ci && npm start` serves it with no extra step, and tests build it once in their global setup.

const ROOT = dirname(fileURLToPath(import.meta.url));
export const PORTAL_DIST_DIR = join(ROOT, 'dist');
const STAMP = '.source-hash';
/** What the bundle is made of: a change to any of them makes the build stale. */
const SOURCES = [
  join(ROOT, 'src'),
  join(ROOT, 'index.html'),
  join(ROOT, 'vite.config.ts'),
  join(ROOT, 'precompress.ts'),
  join(ROOT, 'package.json'),
  join(ROOT, '../shared/src/schemas'),
  join(ROOT, '../shared/src/rules'),
];

function files(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

export function portalSourceHash(): string {
  const hash = createHash('sha256');
  for (const file of SOURCES.flatMap(files)) hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file));
  return hash.digest('hex');
}

/** Whether dist/ holds a build of the current sources. */
export function portalBuildIsCurrent(): boolean {
  const stamp = join(PORTAL_DIST_DIR, STAMP);
  return existsSync(stamp) && readFileSync(stamp, 'utf8') === portalSourceHash();
}

/**
 * Builds into a fresh directory and renames it over dist/, so a server reading dist/ never sees half a build.
 * Returns whether it built.
 */
export async function ensurePortalBuild(options: { log?: (line: string) => void } = {}): Promise<boolean> {
  if (portalBuildIsCurrent()) return false;
  const sourceHash = portalSourceHash();
  options.log?.('Building the brand portal (once per change of its sources)…');
  const { build } = await import('vite');
  const outDir = join(ROOT, `dist-${process.pid}-${Date.now()}`);
  try {
    await build({ root: ROOT, configFile: join(ROOT, 'vite.config.ts'), logLevel: 'warn', build: { outDir } });
    writeFileSync(join(outDir, STAMP), sourceHash);
    rmSync(PORTAL_DIST_DIR, { recursive: true, force: true });
    renameSync(outDir, PORTAL_DIST_DIR);
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const built = await ensurePortalBuild({ log: console.log });
  console.log(built ? `Portal built into ${PORTAL_DIST_DIR}` : 'Portal build is current');
}
