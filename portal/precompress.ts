import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

// The portal's assets compressed once, at build time, at the strongest settings (brotli 11, gzip 9): core-api
// then sends `name.js.br` or `name.js.gz` as they are (portal-static.ts), never compressing them per request.

/** The text files worth compressing; images and fonts are compressed already. */
const TEXT_EXTENSIONS = new Set(['.js', '.mjs', '.css', '.svg', '.json', '.html', '.txt', '.map']);

/** The encodings written beside each asset, as `Content-Encoding` names them, with their file suffix. */
export const PRECOMPRESSED_ENCODINGS = [
  { encoding: 'br', suffix: '.br' },
  { encoding: 'gzip', suffix: '.gz' },
] as const;

/** Writes `file.br` and `file.gz` beside every text file under `dir`; returns the files compressed. */
export function precompressAssets(dir: string): string[] {
  const done: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      done.push(...precompressAssets(path));
      continue;
    }
    if (!TEXT_EXTENSIONS.has(extname(name))) continue;
    const source = readFileSync(path);
    writeFileSync(
      `${path}.br`,
      brotliCompressSync(source, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
          [constants.BROTLI_PARAM_SIZE_HINT]: source.length,
        },
      }),
    );
    writeFileSync(`${path}.gz`, gzipSync(source, { level: 9 }));
    done.push(path);
  }
  return done;
}
