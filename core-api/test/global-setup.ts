import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateToLatest, openDatabase } from '../src/db/database.ts';

/**
 * Creating a PGlite database (initdb in WASM) costs seconds per test file; loading a dump of an
 * already-migrated one costs a fraction of that. The template is made once per run, from the current
 * migrations, and its path handed to the test workers through the environment.
 */
export default async function setup(): Promise<() => void> {
  if (process.env.PTS_TEST_DB === 'postgres') return () => {};
  const handle = await openDatabase({});
  await migrateToLatest(handle.db);
  if (!handle.pglite) throw new Error('openDatabase did not expose its PGlite instance');
  const dump = await handle.pglite.dumpDataDir('none');
  const dir = mkdtempSync(join(tmpdir(), 'pts-pglite-template-'));
  const file = join(dir, 'template.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  await handle.close();
  process.env.PTS_TEST_PGLITE_TEMPLATE = file;
  return () => rmSync(dir, { recursive: true, force: true });
}
