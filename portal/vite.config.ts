import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by core-api under /portal (docs/portal.md); hashed file names under /portal/assets are cached for a year.
export default defineConfig({
  base: '/portal/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline modulepreload polyfill: the CSP allows no inline script.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
});
