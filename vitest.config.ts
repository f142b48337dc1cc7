import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      // Property tests (fast-check) run a hundred cases each: on a loaded 2-core machine one took over vitest's
      // default 5 s, so the pure workspace gets the same minute as the others.
      { test: { name: 'shared', root: './shared', include: ['src/**/*.test.ts'], testTimeout: 60_000 } },
      {
        test: {
          name: 'sdk',
          root: './sdk',
          include: ['test/**/*.test.ts'],
          testTimeout: 90_000,
          hookTimeout: 120_000,
          pool: 'forks',
          // The browser tests run Chromium against a real core-api from core-api's test harness.
          globalSetup: ['../core-api/test/global-setup.ts'],
        },
      },
      {
        test: {
          name: 'core-api',
          root: './core-api',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'contracts/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'forks',
          globalSetup: ['./test/global-setup.ts'],
        },
      },
      {
        test: {
          name: 'bots',
          root: './bots',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'forks',
          // End-to-end tests start a real core-api (PGlite + anvil) from core-api's test harness.
          globalSetup: ['../core-api/test/global-setup.ts'],
        },
      },
      {
        test: {
          name: 'portal',
          root: './portal',
          include: ['test/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          pool: 'forks',
          // Builds the portal when its sources changed; the journeys run Chromium against a real core-api.
          globalSetup: ['./test/global-setup.ts', '../core-api/test/global-setup.ts'],
        },
      },
      {
        // The portal's component tests: forms, lists and the error mapper on a DOM emulator (happy-dom), in
        // milliseconds; the Chromium journeys above stay the proof that pages work.
        test: {
          name: 'portal-components',
          root: './portal',
          include: ['src/**/*.test.tsx'],
          environment: 'happy-dom',
        },
      },
      {
        test: {
          name: 'cms-plugin',
          root: './cms-plugin',
          include: ['tests/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 240_000,
          pool: 'forks',
          // Builds the plugin zip (installing its own @wordpress/scripts when missing), and the PGlite template.
          globalSetup: ['./tests/support/global-setup.ts', '../core-api/test/global-setup.ts'],
        },
      },
    ],
  },
});
