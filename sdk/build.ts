import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = dirname(fileURLToPath(import.meta.url));

/** The SDK's version: the package's, baked into the script as `pts.version`. */
export const SDK_VERSION: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;

/**
 * Bundles `src/index.ts` into the one minified script served at `/sdk.js` (an IIFE with no imports, for
 * browsers from 2019 on). core-api calls this at start (~50 ms); `npm run build -w @pts/sdk` writes the
 * same bytes to `dist/sdk.js` for inspection or self-hosting.
 */
export async function buildSdk(): Promise<string> {
  const result = await build({
    entryPoints: [join(ROOT, 'src/index.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2019',
    legalComments: 'none',
    define: { __PTS_SDK_VERSION__: JSON.stringify(SDK_VERSION) },
    banner: { js: `/* pts sdk ${SDK_VERSION} */` },
    write: false,
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error('esbuild produced no output for the SDK');
  return output.text;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const code = await buildSdk();
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  writeFileSync(join(ROOT, 'dist/sdk.js'), code);
  writeFileSync(join(ROOT, 'dist/sdk.d.ts'), readFileSync(join(ROOT, 'sdk.d.ts')));
  console.log(`sdk/dist/sdk.js: ${Buffer.byteLength(code)} bytes`);
}
