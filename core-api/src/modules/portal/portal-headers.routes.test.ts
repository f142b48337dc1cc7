import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';

// Issue 33 §7: the portal's JSON API is same-origin only and never cached. Every route /openapi.json documents
// under /portal/api (the route tables generate it, so a new route is covered without listing it here) is
// called by a signed-in owner from a brand website's origin: no answer grants CORS, every answer is no-store.

let platform: TestPlatform;
let owner: PortalBrowser;
let brandId: string;
const BRAND_ORIGIN = 'https://shop.brand-site.example';

interface PortalRoute {
  method: string;
  template: string;
}

/** Every documented /portal/api operation; the ones that end the session last, so the others run signed in. */
async function portalRoutesOfTheDocument(): Promise<PortalRoute[]> {
  const document = (await platform.get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  const routes = Object.entries(document.paths)
    .filter(([path]) => path.startsWith('/portal/api/'))
    .flatMap(([template, operations]) => Object.keys(operations).map((method) => ({ method, template })));
  const endsSession = (route: PortalRoute) => /sign-out|\/password$/.test(route.template);
  return [...routes.filter((r) => !endsSession(r)), ...routes.filter(endsSession)];
}

const pathOf = (template: string) =>
  template.replace('/portal/api', '').replace(/\{(\w+)\}/g, (_, name: string) => (name === 'brandId' ? brandId : 'x1'));

/** A signed-in owner's request sent from a brand website's page (the browser adds Origin). */
async function fromBrandSite(method: string, path: string) {
  const headers: Record<string, string> = {
    origin: BRAND_ORIGIN,
    cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
  };
  if (method !== 'get') {
    headers['content-type'] = 'application/json';
    headers['x-csrf-token'] = owner.csrf;
  }
  return fetch(`${platform.url}/portal/api${path}`, {
    method: method.toUpperCase(),
    headers,
    ...(method !== 'get' ? { body: '{}' } : {}),
  });
}

beforeAll(async () => {
  platform = await startTestPlatform();
  ({ brandId } = await platform.createBrand({ name: 'Headers', domain: 'brand-site.example' }));
  owner = await portalMember(platform, brandId, 'owner@brand-site.example', 'owner');
});

afterAll(async () => {
  await platform?.stop();
});

describe('portal API headers (issue 33 §7)', () => {
  it('the brand-facing API still answers the brand website with CORS (the control of the checks below)', async () => {
    const answer = await fetch(`${platform.url}/services/perks?brandId=${brandId}`, {
      headers: { origin: BRAND_ORIGIN },
    });
    expect(answer.headers.get('access-control-allow-origin')).toBe(BRAND_ORIGIN);
    const preflight = await fetch(`${platform.url}/services/perks`, {
      method: 'OPTIONS',
      headers: { origin: BRAND_ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBe(BRAND_ORIGIN);
  });

  it('signed-in answers that succeed are no-store too (the dashboard, the team, the brand)', async () => {
    const session = await owner.session();
    expect(session.signedIn).toBe(true);
    for (const path of [`/brands/${brandId}`, `/brands/${brandId}/team`, `/brands/${brandId}/audit`]) {
      const answer = await owner.request('GET', path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('cache-control'), path).toBe('no-store');
    }
  });
  it('no /portal/api route grants a cross-origin request, and every answer is Cache-Control: no-store', async () => {
    const routes = await portalRoutesOfTheDocument();
    expect(routes.length).toBeGreaterThan(40);
    const wrong: string[] = [];
    for (const { method, template } of routes) {
      const path = pathOf(template);
      const preflight = await fetch(`${platform.url}/portal/api${path}`, {
        method: 'OPTIONS',
        headers: { origin: BRAND_ORIGIN, 'access-control-request-method': method.toUpperCase() },
      });
      if (preflight.headers.get('access-control-allow-origin') !== null) wrong.push(`OPTIONS ${template}: CORS`);
      const answer = await fromBrandSite(method, path);
      await answer.arrayBuffer();
      const label = `${method.toUpperCase()} ${template} (${answer.status})`;
      if (answer.headers.get('access-control-allow-origin') !== null) wrong.push(`${label}: CORS`);
      if (answer.headers.get('access-control-allow-credentials') !== null) wrong.push(`${label}: credentials`);
      if (answer.headers.get('cache-control') !== 'no-store')
        wrong.push(`${label}: Cache-Control ${answer.headers.get('cache-control')}`);
      // The exports (`….csv`) answer CSV when they succeed; every other answer, and every refusal, is JSON.
      const type = template.endsWith('.csv') && answer.status === 200 ? 'text/csv' : 'application/json';
      if (!answer.headers.get('content-type')?.startsWith(type)) wrong.push(`${label}: not ${type}`);
    }
    expect(wrong).toEqual([]);
  });
});
