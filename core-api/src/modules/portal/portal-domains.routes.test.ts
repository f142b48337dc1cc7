import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';
import { runCli } from '../../cli/run-cli.ts';

// Removing a verified domain (issue 22, Integrations): one function of the brands module behind the portal
// route, `DELETE /admin/brands/:brandId/domains/:domain` and `pts brand remove-domain`; admin or owner only
// (a viewer gets 403), another brand's member 404, no CSRF token no change; audited with who removed it.

let platform: TestPlatform;
let brandA: CreatedBrand;
let brandB: CreatedBrand;
let ownerA: PortalBrowser;
let adminA: PortalBrowser;
let viewerA: PortalBrowser;
let ownerB: PortalBrowser;
const txtRecords = new Map<string, string[][]>();
const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });

beforeAll(async () => {
  platform = await startTestPlatform(
    {},
    {
      resolveTxt: async (host) => {
        const records = txtRecords.get(host);
        if (!records) throw Object.assign(new Error(`no record at ${host}`), { code: 'ENOTFOUND' });
        return records;
      },
    },
  );
  brandA = await platform.createBrand({ name: 'Brand A', domain: 'a.example.com' });
  brandB = await platform.createBrand({ name: 'Brand B', domain: 'b.example.com' });
  ownerA = await portalMember(platform, brandA.brandId, 'alice@a.example.com', 'owner');
  adminA = await portalMember(platform, brandA.brandId, 'adam@a.example.com', 'admin');
  viewerA = await portalMember(platform, brandA.brandId, 'victor@a.example.com', 'viewer');
  ownerB = await portalMember(platform, brandB.brandId, 'bob@b.example.com', 'owner');
  for (const [brand, browser, names] of [
    [brandA, ownerA, ['shop.a.example.com', 'blog.a.example.com', 'cli.a.example.com', 'api.a.example.com']],
    [brandB, ownerB, ['b.example.com']],
  ] as const) {
    for (const name of names) {
      txtRecords.set(`_pts.${name}`, [[`brand_id=${brand.brandId};api_key=${brand.apiKey}`]]);
      const verified = await browser.request('POST', `/brands/${brand.brandId}/domains/${name}/verify`);
      expect(verified.body.dnsConfigured).toBe(true);
    }
  }
});

afterAll(async () => {
  await platform?.stop();
});

const a = () => `/brands/${brandA.brandId}`;
const domainsOf = async (brand: CreatedBrand) =>
  (await platform.get(`/admin/brands/${brand.brandId}`, admin())).body.brand.verifiedDomains as string[];

describe('removing a verified domain in the portal', () => {
  it('an admin removes one; the brand no longer lists it and the audit log names the admin', async () => {
    const removed = await adminA.request('DELETE', `${a()}/domains/shop.a.example.com`);
    expect(removed.status).toBe(200);
    expect(removed.body.verifiedDomains).not.toContain('shop.a.example.com');
    expect(await domainsOf(brandA)).toEqual(['blog.a.example.com', 'cli.a.example.com', 'api.a.example.com']);
    const overview = await viewerA.request('GET', `${a()}/integrations`);
    expect(overview.body.domains.verifiedDomains).not.toContain('shop.a.example.com');
    const audit = await viewerA.request('GET', `${a()}/audit?action=brand.domain_remove`);
    expect(audit.body.entries[0]).toMatchObject({
      actor: 'portal:adam@a.example.com',
      action: 'brand.domain_remove',
      details: { domain: 'shop.a.example.com' },
    });
  });

  it('a viewer gets 403, no CSRF token 403, a domain not verified 404, a bad name 400: nothing changes', async () => {
    const before = await domainsOf(brandA);
    const viewer = await viewerA.request('DELETE', `${a()}/domains/blog.a.example.com`);
    expect(viewer.status).toBe(403);
    expect(viewer.body.error).toMatch(/needs admin/);
    const noCsrf = await ownerA.request('DELETE', `${a()}/domains/blog.a.example.com`, undefined, { csrf: false });
    expect(noCsrf.status).toBe(403);
    const absent = await ownerA.request('DELETE', `${a()}/domains/shop.a.example.com`);
    expect(absent.status).toBe(404);
    expect(absent.body.error).toMatch(/not one of the brand's verified domains/);
    expect((await ownerA.request('DELETE', `${a()}/domains/not_a_domain!`)).status).toBe(400);
    expect(await domainsOf(brandA)).toEqual(before);
  });

  it("brand A's owner gets 404 for brand B's domain, which stays verified", async () => {
    const answer = await ownerA.request('DELETE', `/brands/${brandB.brandId}/domains/b.example.com`);
    expect(answer.status).toBe(404);
    expect(await domainsOf(brandB)).toEqual(['b.example.com']);
  });

  it('a removed domain verifies again through its TXT record', async () => {
    const again = await ownerA.request('POST', `${a()}/domains/shop.a.example.com/verify`);
    expect(again.body.dnsConfigured).toBe(true);
    expect(await domainsOf(brandA)).toContain('shop.a.example.com');
  });
});

describe('the same removal from the admin API and the CLI', () => {
  it('DELETE /admin/brands/:brandId/domains/:domain needs the admin token and is audited as admin', async () => {
    const path = `/admin/brands/${brandA.brandId}/domains/api.a.example.com`;
    const call = (headers: Record<string, string> = {}) =>
      fetch(`${platform.url}${path}`, { method: 'DELETE', headers }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { brand: { verifiedDomains: string[] } },
      }));
    expect((await call()).status).toBe(401);
    const removed = await call(admin());
    expect(removed.status).toBe(200);
    expect(removed.body.brand.verifiedDomains).not.toContain('api.a.example.com');
    expect((await call(admin())).status).toBe(404);
    const audit = await ownerA.request('GET', `${a()}/audit?actorKind=admin`);
    expect(audit.body.entries[0]).toMatchObject({ actor: 'admin', action: 'brand.domain_remove' });
  });

  it('pts brand remove-domain --json prints the brand without the domain', async () => {
    let stdout = '';
    let stderr = '';
    const io = {
      env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    };
    const argv = ['brand', 'remove-domain', '--brand', brandA.brandId, '--domain', 'CLI.a.example.com', '--json'];
    expect(await runCli(argv, io)).toBe(0);
    expect(stderr).toBe('');
    const printed = JSON.parse(stdout);
    expect(printed.brandId).toBe(brandA.brandId);
    expect(printed.verifiedDomains).not.toContain('cli.a.example.com');
    expect(await domainsOf(brandA)).not.toContain('cli.a.example.com');
    stderr = '';
    expect(await runCli(argv, io)).toBe(1);
    expect(stderr).toMatch(/not one of the brand's verified domains/);
    expect(await runCli(['brand', 'remove-domain', '--brand', brandA.brandId], io)).toBe(2);
  });
});
