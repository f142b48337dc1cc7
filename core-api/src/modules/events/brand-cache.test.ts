import { randomBytes } from 'node:crypto';
import { createManualClock } from '@pts/shared';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../../../test/database.ts';
import { createSecretBox } from '../../security/secret-box.ts';
import { createBrand, setRule } from '../brands/brands.service.ts';
import { createBrandCache } from './brand-cache.ts';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

describe('brand cache', () => {
  // The load is held with its connection: the change needs a second one, which single-session PGlite lacks.
  it.runIf(testDatabaseKind === 'postgres')(
    'does not keep what a load read before a change it was told about while loading',
    async () => {
      const clock = createManualClock(new Date());
      const secrets = createSecretBox(randomBytes(32).toString('hex'));
      const deps = { db: database.db, secrets, clock };
      const brand = await createBrand(deps, { name: 'Race', domain: 'race.example' });
      await setRule(deps, brand.brandId, { eventType: 'visit', rewardAmount: 10 });

      // Holds the rules the cache's next load read until released: the load has read, then the change lands.
      let hold: Promise<void> | undefined;
      let release = () => {};
      const gate: KyselyPlugin = {
        transformQuery: (args) => args.node,
        transformResult: async (args) => {
          const rows = args.result.rows as { event_type?: string }[];
          if (rows.some((row) => row.event_type !== undefined)) await hold;
          return args.result;
        },
      };
      const cache = createBrandCache({ db: database.db.withPlugin(gate), secrets, clock, ttlMs: 600_000 });

      hold = new Promise((resolve) => {
        release = resolve;
      });
      const inFlight = cache.get(brand.brandId);
      await new Promise((resolve) => setTimeout(resolve, 50));
      // Another process (or this one) changes the rule and says so while the load is still running.
      await setRule(deps, brand.brandId, { eventType: 'visit', rewardAmount: 25 });
      cache.invalidate(brand.brandId);
      hold = undefined;
      release();
      expect((await inFlight)?.rulesByType.get('visit')?.reward_amount).toBe(10n);

      const after = await cache.get(brand.brandId);
      expect(after?.rulesByType.get('visit')?.reward_amount).toBe(25n);
    },
  );
});
