import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';

// A perk's redemption window in the public catalogue (issue 22, Perks): `GET /services/perks/:brandId` carries
// `startsAt` and `endsAt` (documented in /openapi.json from the shared schema), and a perk outside its window
// is not `available` — nor in `available=true`, nor counted as units left by the seed-compatible answer.

let platform: TestPlatform;
let brand: CreatedBrand;
const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });
const ids: Record<string, number> = {};

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({ name: 'Window Brand', domain: 'window.example.com' });
  const now = platform.clock.now().getTime();
  const at = (hours: number) => new Date(now + hours * 3600_000).toISOString();
  const windows: Record<string, { startsAt?: string; endsAt?: string }> = {
    open: {},
    current: { startsAt: at(-1), endsAt: at(24) },
    future: { startsAt: at(24) },
    past: { startsAt: at(-48), endsAt: at(-24) },
  };
  for (const [name, window] of Object.entries(windows)) {
    const created = await platform.post(
      '/admin/perks',
      { brandId: brand.brandId, name: `${name} perk`, cost: 10, ...window },
      admin(),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    ids[name] = created.body.perk.perkId;
  }
});

afterAll(async () => {
  await platform?.stop();
});

describe('the perk catalogue carries the redemption window', () => {
  it('each perk has startsAt and endsAt; only perks inside their window are available', async () => {
    const catalogue = await platform.get(`/services/perks/${brand.brandId}`);
    expect(catalogue.status).toBe(200);
    const byId = new Map(catalogue.body.perks.map((p: { id: number }) => [p.id, p]));
    const admin_ = (await platform.get(`/admin/perks?brand=${brand.brandId}`, admin())).body.perks as {
      perkId: number;
      startsAt: string | null;
      endsAt: string | null;
    }[];
    for (const perk of admin_) {
      expect(byId.get(perk.perkId)).toMatchObject({ startsAt: perk.startsAt, endsAt: perk.endsAt });
    }
    expect(byId.get(ids.open)).toMatchObject({ startsAt: null, endsAt: null, available: true });
    expect(byId.get(ids.current)).toMatchObject({ startsAt: expect.any(String), available: true });
    expect(byId.get(ids.future)).toMatchObject({ endsAt: null, available: false });
    expect(byId.get(ids.past)).toMatchObject({ available: false });

    const available = await platform.get(`/services/perks/${brand.brandId}?available=true`);
    expect(available.body.perks.map((p: { id: number }) => p.id).sort()).toEqual([ids.open, ids.current].sort());
  });

  it('the window opens on the clock: a future perk becomes available once its start passes', async () => {
    platform.clock.advance(25 * 3600_000);
    const catalogue = await platform.get(`/services/perks/${brand.brandId}?available=true`);
    const available = catalogue.body.perks.map((p: { id: number }) => p.id);
    expect(available).toContain(ids.future);
    expect(available).not.toContain(ids.current);
    expect(available).not.toContain(ids.past);
  });

  it('/openapi.json documents startsAt and endsAt in the catalogue answer', async () => {
    const doc = (await platform.get('/openapi.json')).body;
    // biome-ignore lint/suspicious/noExplicitAny: walks the OpenAPI document
    const resolve = (schema: any): any =>
      schema?.$ref ? resolve(doc.components.schemas[schema.$ref.split('/').pop()]) : schema;
    const answer = resolve(
      doc.paths['/services/perks/{brandId}'].get.responses['200'].content['application/json'].schema,
    );
    const item = resolve(resolve(answer.properties.perks).items);
    expect(Object.keys(item.properties)).toEqual(expect.arrayContaining(['startsAt', 'endsAt', 'available']));
  });
});
