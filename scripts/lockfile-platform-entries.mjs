// The npm registry mirror this project is built against serves only the linux-glibc builds of Biome's
// platform binaries, so `npm install` leaves the other platforms out of package-lock.json and `npm ci`
// then refuses the lockfile as "out of sync". This adds a platform-tagged entry for each missing optional
// binary (npm skips them on other platforms). Run it after any `npm install` that rewrites the lockfile.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  if (!path.endsWith('node_modules/@biomejs/biome')) continue;
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (lock.packages[key]) continue;
    const match = /cli-(android|darwin|linux|win32)-(arm64|x64)(-musl)?$/.exec(name);
    if (!match) continue;
    lock.packages[key] = {
      version,
      cpu: [match[2]],
      dev: true,
      ...(match[3] ? { libc: ['musl'] } : {}),
      license: 'MIT OR Apache-2.0',
      optional: true,
      os: [match[1]],
    };
    added++;
  }
}
const sorted = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
lock.packages = sorted;
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lockfile: added ${added} platform entries`);
