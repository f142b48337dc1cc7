import { join, resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { precompressAssets } from './precompress.ts';

/** After the bundle is written: `.br` and `.gz` beside each asset (core-api serves them as they are). */
function precompress(): Plugin {
  let outDir = 'dist';
  return {
    name: 'pts-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    closeBundle() {
      precompressAssets(join(outDir, 'assets'));
    },
  };
}

// Served by core-api under /portal (docs/portal.md); hashed file names under /portal/assets are cached for a year.
export default defineConfig({
  base: '/portal/',
  plugins: [react(), precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline modulepreload polyfill: the CSP allows no inline script.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    rolldownOptions: {
      output: {
        codeSplitting: {
          // zod and the module that makes it jitless share one chunk, the config after zod's own code: every chunk
          // that builds a schema imports this one, so the config runs before any schema is built, however the
          // other chunks are split (src/zod-jitless.ts; docs/decisions.md, "zod `jitless`").
          groups: [{ name: 'zod', test: /[\\/]node_modules[\\/]zod[\\/]|[\\/]src[\\/]zod-jitless\.ts$/ }],
        },
      },
    },
  },
});
