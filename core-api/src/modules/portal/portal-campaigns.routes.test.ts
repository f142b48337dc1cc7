import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { runPts } from '../../../test/cli.ts';
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
let laterDropId = '';
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

describe('portal drop changes', () => {
  const a = () => brandA.brandId;
  const claim = (id: string, identityKey: string) =>
    platform.signedPost(
      '/services/drops/claim',
      { brandId: a(), dropId: id, userIdentifier: identityKey },
      brandA.securityKey,
    );

  it('changes an unopened drop where safe, audited with what changed and what it was', async () => {
    const created = await ownerA.request('POST', `/brands/${a()}/drops`, {
      name: 'Later',
      amount: 10,
      totalSupply: 5,
      startsAt: inHours(1),
      endsAt: inHours(3),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    laterDropId = created.body.drop.dropId;
    const empty = await ownerA.request('PATCH', `/brands/${a()}/drops/${laterDropId}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatch(/at least one of name, amount/);
    const backwards = await ownerA.request('PATCH', `/brands/${a()}/drops/${laterDropId}`, { endsAt: inHours(0.5) });
    expect(backwards.status).toBe(400);
    expect(backwards.body.details.field).toBe('endsAt');

    const changed = await ownerA.request('PATCH', `/brands/${a()}/drops/${laterDropId}`, {
      name: 'Sooner',
      amount: 12,
      totalSupply: 6,
      perUserLimit: 2,
      startsAt: inHours(0.5),
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.drop).toMatchObject({ name: 'Sooner', amount: 12, totalSupply: 6, perUserLimit: 2 });
    expect(changed.body.drop.startsAt).toBe(inHours(0.5));
    const audit = (await auditRows('drop.update')).filter((row) => row.subject === laterDropId);
    expect(audit.map((row) => [row.actor, row.brand_id])).toEqual([['portal:owner@a.example.com', a()]]);
    expect(audit[0]!.details).toMatchObject({
      name: 'Sooner',
      amount: 12,
      previous: { name: 'Later', amount: 10, totalSupply: 5, perUserLimit: 1 },
    });
    // The claim path reads the drop from the database: the new start is in force at once.
    const early = await claim(laterDropId, 'early@customer.example');
    expect(early.status).toBe(400);
    expect(early.body.details.reason).toBe('not_started');
    expect(early.body.details.startsAt).toBe(inHours(0.5));
  });

  it('refuses what is not safe on a claimed, opened drop with a message saying why', async () => {
    const path = `/brands/${a()}/drops/${dropId}`;
    const amount = await ownerA.request('PATCH', path, { amount: 41 });
    expect(amount.status).toBe(409);
    expect(amount.body.details.field).toBe('amount');
    expect(amount.body.error).toMatch(/once the drop is claimed/);
    const start = await ownerA.request('PATCH', path, { startsAt: inHours(-0.5) });
    expect(start.status).toBe(409);
    expect(start.body.details.field).toBe('startsAt');
    const past = await ownerA.request('PATCH', path, { endsAt: inHours(-0.1) });
    expect(past.status).toBe(400);
    expect(past.body.error).toMatch(/End now/);
    // Safe ones go through: more supply, a later end, the same amount.
    const more = await ownerA.request('PATCH', path, { totalSupply: 3, endsAt: inHours(4), amount: 40 });
    expect(more.status, JSON.stringify(more.body)).toBe(200);
    expect(more.body.drop).toMatchObject({ totalSupply: 3, claimed: 1, remaining: 2, endsAt: inHours(4) });
  });

  it('ends a drop now: claims are refused from that moment, what was claimed stays, it cannot change again', async () => {
    const ended = await ownerA.request('POST', `/brands/${a()}/drops/${dropId}/end`);
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    expect(ended.body.drop).toMatchObject({ dropId, claimed: 1, endsAt: platform.clock.now().toISOString() });
    const refused = await claim(dropId, 'late@customer.example');
    expect(refused.status).toBe(400);
    expect(refused.body.details.reason).toBe('ended');
    const again = await ownerA.request('POST', `/brands/${a()}/drops/${dropId}/end`);
    expect(again.status).toBe(409);
    const change = await ownerA.request('PATCH', `/brands/${a()}/drops/${dropId}`, { name: 'Too late' });
    expect(change.status).toBe(409);
    expect(change.body.error).toMatch(/ended/);
    const audit = (await auditRows('drop.end')).filter((row) => row.subject === dropId);
    expect(audit.map((row) => row.actor)).toEqual(['portal:owner@a.example.com']);
    expect(audit[0]!.details).toMatchObject({ claimed: 1, previous: { endsAt: inHours(4) } });
  });

  it('the admin API and pts drop list|update|end run the same service, audited as admin', async () => {
    const cli = (argv: string[]) => runPts(platform, argv);
    expect((await platform.get(`/admin/brands/${a()}/drops`)).status).toBe(401);
    const listed = await cli(['drop', 'list', '--brand', a(), '--json']);
    expect(listed, listed.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(listed.stdout).drops.map((d: { dropId: string }) => d.dropId)).toEqual([laterDropId, dropId]);
    const renamed = await cli(['drop', 'update', '--brand', a(), '--drop', laterDropId, '--name', 'By CLI', '--json']);
    expect(renamed, renamed.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(renamed.stdout)).toMatchObject({ dropId: laterDropId, name: 'By CLI', amount: 12 });
    const nothing = await cli(['drop', 'update', '--brand', a(), '--drop', laterDropId]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/give at least one of --name/);
    const ended = await cli(['drop', 'end', '--brand', a(), '--drop', laterDropId, '--json']);
    expect(ended, ended.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(ended.stdout).endsAt).toBe(platform.clock.now().toISOString());
    const foreign = await platform.post(`/admin/brands/${brandB.brandId}/drops/${dropId}/end`, undefined, admin());
    expect(foreign.status).toBe(404);
    const actors = (
      await platform.deps.db
        .selectFrom('audit_log')
        .select(['actor', 'action'])
        .where('subject', '=', laterDropId)
        .orderBy('id')
        .execute()
    ).map((row) => `${row.actor} ${row.action}`);
    expect(actors).toEqual([
      'portal:owner@a.example.com drop.create',
      'portal:owner@a.example.com drop.update',
      'admin drop.update',
      'admin drop.end',
    ]);
  });
});

describe('portal campaigns and drops: roles, CSRF, brands', () => {
  let openDropId = '';
  beforeAll(async () => {
    const open = await ownerA.request('POST', `/brands/${brandA.brandId}/drops`, {
      name: 'Open',
      amount: 3,
      totalSupply: 9,
      endsAt: inHours(5),
    });
    openDropId = open.body.drop.dropId;
  });

  it('a viewer reads but every change is refused with 403, and nothing changes', async () => {
    const a = brandA.brandId;
    const [campaigns, drops] = [await count('hashtag_campaigns'), await count('drops')];
    const changes: [string, string, unknown][] = [
      ['POST', `/brands/${a}/campaigns`, { hashtag: '#viewer', reward: 1, startDate: inHours(0), endDate: inHours(1) }],
      ['PATCH', `/brands/${a}/campaigns/${campaignId}`, { reward: 999 }],
      ['POST', `/brands/${a}/campaigns/${campaignId}/end`, undefined],
      ['POST', `/brands/${a}/drops`, { amount: 1, totalSupply: 1, endsAt: inHours(1) }],
      ['PATCH', `/brands/${a}/drops/${openDropId}`, { name: 'viewer' }],
      ['POST', `/brands/${a}/drops/${openDropId}/end`, undefined],
    ];
    const dropsBefore = (await ownerA.request('GET', `/brands/${a}/drops`)).body;
    for (const [method, path, body] of changes) {
      const answer = await viewerA.request(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.error).toMatch(/viewer/);
    }
    expect([await count('hashtag_campaigns'), await count('drops')]).toEqual([campaigns, drops]);
    expect((await ownerA.request('GET', `/brands/${a}/drops`)).body).toEqual(dropsBefore);
    const listed = await viewerA.request('GET', `/brands/${a}/campaigns`);
    expect(listed.body.campaigns).toEqual([expect.objectContaining({ rewardMultiplier: 2, reward: null })]);
  });

  it('a change without the CSRF token is refused and changes nothing', async () => {
    const a = brandA.brandId;
    const [campaigns, drops] = [await count('hashtag_campaigns'), await count('drops')];
    const attempts: [string, string, unknown][] = [
      ['POST', `/brands/${a}/campaigns`, { hashtag: '#forged', reward: 1, startDate: inHours(0), endDate: inHours(1) }],
      ['PATCH', `/brands/${a}/campaigns/${campaignId}`, { reward: 999 }],
      ['POST', `/brands/${a}/campaigns/${campaignId}/end`, undefined],
      ['POST', `/brands/${a}/drops`, { amount: 1, totalSupply: 1, endsAt: inHours(1) }],
      ['PATCH', `/brands/${a}/drops/${openDropId}`, { name: 'forged' }],
      ['POST', `/brands/${a}/drops/${openDropId}/end`, undefined],
    ];
    const dropsBefore = (await ownerA.request('GET', `/brands/${a}/drops`)).body;
    for (const [method, path, body] of attempts) {
      const answer = await ownerA.request(method, path, body, { csrf: false });
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.error).toMatch(/CSRF/);
    }
    expect([await count('hashtag_campaigns'), await count('drops')]).toEqual([campaigns, drops]);
    expect((await ownerA.request('GET', `/brands/${a}/drops`)).body).toEqual(dropsBefore);
  });

  it("an owner of brand B gets 403/404 for brand A's campaigns and drops, through either brand's path", async () => {
    const a = brandA.brandId;
    const b = brandB.brandId;
    const [campaigns, drops] = [await count('hashtag_campaigns'), await count('drops')];
    const attempts: [string, string, unknown?][] = [
      ['GET', `/brands/${a}/campaigns`],
      ['POST', `/brands/${a}/campaigns`, { hashtag: '#mole', reward: 1, startDate: inHours(0), endDate: inHours(1) }],
      ['PATCH', `/brands/${a}/campaigns/${campaignId}`, { reward: 999 }],
      ['POST', `/brands/${a}/campaigns/${campaignId}/end`],
      ['GET', `/brands/${a}/drops`],
      ['POST', `/brands/${a}/drops`, { amount: 1, totalSupply: 1, endsAt: inHours(1) }],
      ['PATCH', `/brands/${a}/drops/${openDropId}`, { name: 'mole' }],
      ['POST', `/brands/${a}/drops/${openDropId}/end`],
      // Brand A's campaign and drop under brand B's own path.
      ['PATCH', `/brands/${b}/campaigns/${campaignId}`, { reward: 999 }],
      ['POST', `/brands/${b}/campaigns/${campaignId}/end`],
      ['PATCH', `/brands/${b}/drops/${openDropId}`, { name: 'mole' }],
      ['POST', `/brands/${b}/drops/${openDropId}/end`],
    ];
    const dropsBefore = (await ownerA.request('GET', `/brands/${a}/drops`)).body;
    for (const [method, path, body] of attempts) {
      const answer = await ownerB.request(method, path, body);
      expect([403, 404], `${method} ${path}: ${answer.status}`).toContain(answer.status);
    }
    expect([await count('hashtag_campaigns'), await count('drops')]).toEqual([campaigns, drops]);
    expect((await ownerA.request('GET', `/brands/${a}/drops`)).body).toEqual(dropsBefore);
    expect((await ownerB.request('GET', `/brands/${b}/drops`)).body.drops).toEqual([]);
    expect((await ownerB.request('GET', `/brands/${b}/campaigns`)).body.campaigns).toEqual([]);
    // Every route of this section is in the OpenAPI document, and each was tried above.
    const documented = Object.keys((await platform.get('/openapi.json')).body.paths).filter((p) =>
      /^\/portal\/api\/brands\/\{brandId\}\/(campaigns|drops)/.test(p),
    );
    const tried = new Set(
      attempts.map(([, path]) =>
        `/portal/api${path}`
          .replace(a, '{brandId}')
          .replace(b, '{brandId}')
          .replace(campaignId, '{campaignId}')
          .replace(openDropId, '{dropId}'),
      ),
    );
    expect(new Set(documented)).toEqual(tried);
  });
});

describe('a campaign ends by the server clock', () => {
  it("answers the server's status, ends at the server's now (the page sends no time), then 409", async () => {
    const a = brandA.brandId;
    const before = await ownerA.request('GET', `/brands/${a}/campaigns`);
    expect(before.body.campaigns.find((c: { id: string }) => c.id === campaignId).status).toBe('active');
    const serverNow = platform.clock.now().toISOString();
    const ended = await ownerA.request('POST', `/brands/${a}/campaigns/${campaignId}/end`);
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    expect(ended.body.campaign).toMatchObject({ id: campaignId, endDate: serverNow, status: 'ended' });
    expect((await platform.get(`/services/campaigns/${a}/active`)).body.campaigns).toEqual([]);
    const again = await ownerA.request('POST', `/brands/${a}/campaigns/${campaignId}/end`);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/already ended/);
    const audit = (await auditRows('campaign.end')).filter((row) => row.subject === campaignId);
    expect(audit.map((row) => row.actor)).toEqual(['portal:owner@a.example.com']);
  });
});
