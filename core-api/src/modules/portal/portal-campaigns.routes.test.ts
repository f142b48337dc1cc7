import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';

// The Program page's hashtag campaigns and drops (issue 22, item 2) against the real platform (PGlite or
// PostgreSQL, anvil, our contracts): the same campaign and drop services as the admin API and the
// brand-signed services, audited with the portal user; roles, CSRF and brand isolation.

let platform: TestPlatform;
let brandA: { brandId: string; securityKey: string };
let brandB: { brandId: string; securityKey: string };
let ownerA: PortalBrowser;
let viewerA: PortalBrowser;
let ownerB: PortalBrowser;
let campaignId = '';
let dropId = '';
const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });
const HOSTILE = '<img src=x onerror="alert(1)">';
const inHours = (hours: number) => new Date(platform.clock.now().getTime() + hours * 3600_000).toISOString();
const auditRows = (action: string) =>
  platform.deps.db.selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('id').execute();
const count = async (table: 'hashtag_campaigns' | 'drops') =>
  (await platform.deps.db.selectFrom(table).select('id').execute()).length;

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_TRUST_PROXY: 'true' });
  const rules = [{ eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }];
  brandA = await platform.createBrand({ name: 'Brand A', domain: 'a.example.com', rules });
  brandB = await platform.createBrand({ name: 'Brand B', domain: 'b.example.com', rules });
  ownerA = await portalMember(platform, brandA.brandId, 'owner@a.example.com', 'owner');
  viewerA = await portalMember(platform, brandA.brandId, 'viewer@a.example.com', 'viewer');
  ownerB = await portalMember(platform, brandB.brandId, 'owner@b.example.com', 'owner');
});

afterAll(async () => {
  await platform?.stop();
});

describe('portal hashtag campaigns', () => {
  it('refuses a bad campaign with inline field messages, and creates one through the campaign service', async () => {
    const a = brandA.brandId;
    const invalid = await ownerA.request('POST', `/brands/${a}/campaigns`, {
      hashtag: 'no hash',
      reward: 5,
      rewardMultiplier: 2,
      startDate: '2030-01-02T00:00:00Z',
      endDate: '2030-01-01T00:00:00Z',
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.details.errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^hashtag: must be # followed by/),
        expect.stringMatching(/^reward: give exactly one of reward and rewardMultiplier/),
      ]),
    );
    const backwards = await ownerA.request('POST', `/brands/${a}/campaigns`, {
      hashtag: '#summer',
      reward: 5,
      startDate: '2030-01-02T00:00:00Z',
      endDate: '2030-01-01T00:00:00Z',
    });
    expect(backwards.status).toBe(400);
    expect(backwards.body.details.errors).toEqual(['endDate: must be after startDate']);

    const created = await ownerA.request('POST', `/brands/${a}/campaigns`, {
      hashtag: '#summer',
      reward: 25,
      startDate: inHours(-1),
      endDate: inHours(48),
      maxClaimsPerUser: 3,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.campaign).toMatchObject({ brandId: a, hashtag: '#summer', reward: 25, maxClaimsPerUser: 3 });
    campaignId = created.body.campaign.id;
    // The same campaign the admin API lists and the X bot's active list answers, at once.
    const listed = await platform.get(`/admin/brands/${a}/campaigns`, admin());
    expect(listed.body.campaigns).toEqual([created.body.campaign]);
    const active = await platform.get(`/services/campaigns/${a}/active`);
    expect(active.body.campaigns.map((c: { id: string }) => c.id)).toEqual([campaignId]);
    const audit = (await auditRows('campaign.create')).filter((row) => row.subject === campaignId);
    expect(audit.map((row) => [row.actor, row.brand_id])).toEqual([['portal:owner@a.example.com', a]]);
  });

  it('changes a campaign (the merged one is validated again) and a viewer lists it', async () => {
    const a = brandA.brandId;
    const both = await ownerA.request('PATCH', `/brands/${a}/campaigns/${campaignId}`, {
      endDate: '2000-01-01T00:00:00Z',
    });
    expect(both.status).toBe(400);
    expect(both.body.details.field).toBe('endDate');
    const changed = await ownerA.request('PATCH', `/brands/${a}/campaigns/${campaignId}`, {
      rewardMultiplier: 2,
      excludeBrandPosts: false,
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.campaign).toMatchObject({ reward: null, rewardMultiplier: 2, excludeBrandPosts: false });
    const viewed = await viewerA.request('GET', `/brands/${a}/campaigns`);
    expect(viewed.status).toBe(200);
    expect(viewed.body.campaigns).toEqual([changed.body.campaign]);
    const audit = (await auditRows('campaign.update')).filter((row) => row.subject === campaignId);
    expect(audit.map((row) => row.actor)).toEqual(['portal:owner@a.example.com']);
  });
});

describe('portal drops', () => {
  it('refuses a bad drop with field messages, and creates one that members claim through the services', async () => {
    const a = brandA.brandId;
    const invalid = await ownerA.request('POST', `/brands/${a}/drops`, {
      name: 'x',
      amount: 0,
      totalSupply: 0,
      endsAt: 'tomorrow',
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.details.errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^amount: must be at least 1/),
        expect.stringMatching(/^totalSupply: must be at least 1/),
        expect.stringMatching(/^endsAt: /),
      ]),
    );
    const past = await ownerA.request('POST', `/brands/${a}/drops`, { amount: 5, totalSupply: 2, endsAt: inHours(-1) });
    expect(past.status).toBe(400);
    expect(past.body.details.field).toBe('endsAt');
    const foreign = await ownerA.request('POST', `/brands/${a}/drops`, {
      brandId: brandB.brandId,
      amount: 5,
      totalSupply: 2,
      endsAt: inHours(1),
    });
    expect(foreign.status).toBe(400);

    const created = await ownerA.request('POST', `/brands/${a}/drops`, {
      name: HOSTILE,
      amount: 40,
      totalSupply: 2,
      endsAt: inHours(2),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.drop).toMatchObject({ brandId: a, name: HOSTILE, amount: 40, totalSupply: 2, remaining: 2 });
    dropId = created.body.drop.dropId;
    const audit = (await auditRows('drop.create')).filter((row) => row.subject === dropId);
    expect(audit.map((row) => [row.actor, row.brand_id])).toEqual([['portal:owner@a.example.com', a]]);
    expect(audit[0]!.details).toMatchObject({ name: HOSTILE, amount: 40, totalSupply: 2 });

    // It takes effect at once: a member claims it through the brand-signed services (the drop_claim rule the
    // drop created reached the rule cache), and the portal's list shows the claim.
    platform.clock.advance(1_000);
    const claim = await platform.signedPost(
      '/services/drops/claim',
      { brandId: a, dropId, userIdentifier: 'fan@customer.example' },
      brandA.securityKey,
    );
    expect(claim.status, JSON.stringify(claim.body)).toBe(200);
    expect(claim.body).toMatchObject({ amount: 40, remaining: 1 });
    await waitForMintsSettled(platform);
    const listed = await viewerA.request('GET', `/brands/${a}/drops`);
    expect(listed.status).toBe(200);
    expect(listed.body.drops).toEqual([expect.objectContaining({ dropId, claimed: 1, remaining: 1, name: HOSTILE })]);
  });
});

describe('portal campaigns and drops: roles, CSRF, brands', () => {
  it('a viewer reads but every change is refused with 403, and nothing changes', async () => {
    const a = brandA.brandId;
    const [campaigns, drops] = [await count('hashtag_campaigns'), await count('drops')];
    const changes: [string, string, unknown][] = [
      ['POST', `/brands/${a}/campaigns`, { hashtag: '#viewer', reward: 1, startDate: inHours(0), endDate: inHours(1) }],
      ['PATCH', `/brands/${a}/campaigns/${campaignId}`, { reward: 999 }],
      ['POST', `/brands/${a}/drops`, { amount: 1, totalSupply: 1, endsAt: inHours(1) }],
    ];
    for (const [method, path, body] of changes) {
      const answer = await viewerA.request(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.error).toMatch(/viewer/);
    }
    expect([await count('hashtag_campaigns'), await count('drops')]).toEqual([campaigns, drops]);
    const listed = await viewerA.request('GET', `/brands/${a}/campaigns`);
    expect(listed.body.campaigns).toEqual([expect.objectContaining({ rewardMultiplier: 2, reward: null })]);
  });

  it('a change without the CSRF token is refused and changes nothing', async () => {
    const a = brandA.brandId;
    const [campaigns, drops] = [await count('hashtag_campaigns'), await count('drops')];
    const attempts: [string, string, unknown][] = [
      ['POST', `/brands/${a}/campaigns`, { hashtag: '#forged', reward: 1, startDate: inHours(0), endDate: inHours(1) }],
      ['PATCH', `/brands/${a}/campaigns/${campaignId}`, { reward: 999 }],
      ['POST', `/brands/${a}/drops`, { amount: 1, totalSupply: 1, endsAt: inHours(1) }],
    ];
    for (const [method, path, body] of attempts) {
      const answer = await ownerA.request(method, path, body, { csrf: false });
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.error).toMatch(/CSRF/);
    }
    expect([await count('hashtag_campaigns'), await count('drops')]).toEqual([campaigns, drops]);
  });

  it("an owner of brand B gets 403/404 for brand A's campaigns and drops, through either brand's path", async () => {
    const a = brandA.brandId;
    const b = brandB.brandId;
    const [campaigns, drops] = [await count('hashtag_campaigns'), await count('drops')];
    const attempts: [string, string, unknown?][] = [
      ['GET', `/brands/${a}/campaigns`],
      ['POST', `/brands/${a}/campaigns`, { hashtag: '#mole', reward: 1, startDate: inHours(0), endDate: inHours(1) }],
      ['PATCH', `/brands/${a}/campaigns/${campaignId}`, { reward: 999 }],
      ['GET', `/brands/${a}/drops`],
      ['POST', `/brands/${a}/drops`, { amount: 1, totalSupply: 1, endsAt: inHours(1) }],
      // Brand A's campaign under brand B's own path.
      ['PATCH', `/brands/${b}/campaigns/${campaignId}`, { reward: 999 }],
    ];
    for (const [method, path, body] of attempts) {
      const answer = await ownerB.request(method, path, body);
      expect([403, 404], `${method} ${path}: ${answer.status}`).toContain(answer.status);
    }
    expect([await count('hashtag_campaigns'), await count('drops')]).toEqual([campaigns, drops]);
    expect((await ownerB.request('GET', `/brands/${b}/drops`)).body.drops).toEqual([]);
    expect((await ownerB.request('GET', `/brands/${b}/campaigns`)).body.campaigns).toEqual([]);
    // Every route of this section is in the OpenAPI document, and each was tried above.
    const documented = Object.keys((await platform.get('/openapi.json')).body.paths).filter((p) =>
      /^\/portal\/api\/brands\/\{brandId\}\/(campaigns|drops)/.test(p),
    );
    const tried = new Set(
      attempts.map(([, path]) =>
        `/portal/api${path}`.replace(a, '{brandId}').replace(b, '{brandId}').replace(campaignId, '{campaignId}'),
      ),
    );
    expect(new Set(documented)).toEqual(tried);
  });
});
