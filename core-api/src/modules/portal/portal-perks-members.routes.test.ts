import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';

// The portal's Perks and Members routes against the real platform (PGlite or PostgreSQL, anvil, our
// contracts): the same perk service as the admin API, redemptions through the services, member search and
// pages from the one ledger, manual awards through the event pipeline; roles, CSRF and brand isolation.

let platform: TestPlatform;
let brandA: { brandId: string; securityKey: string };
let brandB: { brandId: string; securityKey: string };
let ownerA: PortalBrowser;
let viewerA: PortalBrowser;
let ownerB: PortalBrowser;
let perkId = 0;
let wallet = '';
const MEMBER = 'shopper@customer.example';
const DISCORD_MEMBER = 'discord_424242@pts.example';
const OTHER_BRAND_MEMBER = 'only-b@customer.example';

function signedEvent(brand: { brandId: string; securityKey: string }, identityKey: string, eventType = 'earn') {
  platform.clock.advance(61_000); // past the 60 s duplicate window
  return platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType, userEmail: identityKey },
    brand.securityKey,
  );
}

const auditRows = (action: string) =>
  platform.deps.db.selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('id').execute();

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_TRUST_PROXY: 'true' });
  const rules = [
    { eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 },
    { eventType: 'daily', rewardAmount: 5, cooldownHours: 24 },
  ];
  brandA = await platform.createBrand({ name: 'Brand A', domain: 'a.example.com', rules });
  brandB = await platform.createBrand({ name: 'Brand B', domain: 'b.example.com', rules });
  ownerA = await portalMember(platform, brandA.brandId, 'owner@a.example.com', 'owner');
  viewerA = await portalMember(platform, brandA.brandId, 'viewer@a.example.com', 'viewer');
  ownerB = await portalMember(platform, brandB.brandId, 'owner@b.example.com', 'owner');
  for (let i = 0; i < 3; i++) {
    const earned = await signedEvent(brandA, MEMBER);
    expect(earned.status, JSON.stringify(earned.body)).toBe(200);
    wallet = earned.body.walletAddress;
  }
  expect((await signedEvent(brandA, DISCORD_MEMBER)).status).toBe(200);
  expect((await signedEvent(brandB, OTHER_BRAND_MEMBER)).status).toBe(200);
  await waitForMintsSettled(platform);
});

afterAll(async () => {
  await platform?.stop();
});

describe('portal perks', () => {
  it('creates a perk through the perk service, with inline validation messages from the shared schema', async () => {
    const invalid = await ownerA.request('POST', `/brands/${brandA.brandId}/perks`, {
      name: '',
      cost: -5,
      imageUrl: 'javascript:alert(1)',
    });
    expect(invalid.status).toBe(400);
    const errors: string[] = invalid.body.details.errors;
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^name: /),
        expect.stringMatching(/^cost: must be ≥ 0/),
        expect.stringMatching(/^imageUrl: must be an http or https URL/),
      ]),
    );
    const backwards = await ownerA.request('POST', `/brands/${brandA.brandId}/perks`, {
      name: 'Backwards',
      cost: 1,
      startsAt: '2030-01-02T00:00:00Z',
      endsAt: '2030-01-01T00:00:00Z',
    });
    expect(backwards.status).toBe(400);
    expect(backwards.body.details.field).toBe('endsAt');

    const created = await ownerA.request('POST', `/brands/${brandA.brandId}/perks`, {
      name: 'Free coffee <b>bold</b>',
      description: 'One coffee',
      cost: 150,
      maxSupply: 10,
      maxPerUser: 0,
      imageUrl: 'https://a.example.com/coffee.png',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.perk).toMatchObject({
      brandId: brandA.brandId,
      name: 'Free coffee <b>bold</b>',
      maxPerUser: 0,
      chainStatus: 'synced',
      startsAt: null,
      endsAt: null,
    });
    perkId = created.body.perk.perkId;
    // The same perk the admin API sees, and the change is audited with the portal user as the actor.
    const admin = await platform.get(`/admin/perks/${perkId}`, {
      authorization: `Bearer ${platform.deps.adminToken}`,
    });
    expect(admin.body.perk).toEqual(created.body.perk);
    const audit = (await auditRows('perk.create')).filter((row) => row.subject === String(perkId));
    expect(audit.map((row) => row.actor)).toEqual(['portal:owner@a.example.com']);
  });

  it("shows the perk's collection, and a redemption made through the services appears on it", async () => {
    const before = await ownerA.request('GET', `/brands/${brandA.brandId}/perks/${perkId}`);
    expect(before.status).toBe(200);
    expect(before.body.collection).toEqual({
      contractAddress: platform.deps.chain.contracts.perkNft,
      collectionId: perkId,
    });
    expect(before.body.redemptions).toEqual([]);
    platform.clock.advance(1_000);
    const redeemed = await platform.signedPost(
      '/services/perks/redeem',
      { brandId: brandA.brandId, perkId, userIdentifier: MEMBER },
      brandA.securityKey,
    );
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
    const after = await ownerA.request('GET', `/brands/${brandA.brandId}/perks/${perkId}`);
    expect(after.body.redemptions).toEqual([
      expect.objectContaining({
        redemptionId: redeemed.body.redemptionId,
        userKey: MEMBER,
        status: 'confirmed',
        cost: 150,
        confirmationCode: redeemed.body.confirmationCode,
      }),
    ]);
    const list = await viewerA.request('GET', `/brands/${brandA.brandId}/perks`);
    expect(list.body.perks.map((perk: { perkId: number }) => perk.perkId)).toEqual([perkId]);
  });

  it('edits the perk: a window that has not opened refuses redemptions; constraints are added and removed', async () => {
    const opens = new Date(platform.clock.now().getTime() + 86_400_000).toISOString();
    const edited = await ownerA.request('PATCH', `/brands/${brandA.brandId}/perks/${perkId}`, {
      startsAt: opens,
      maxPerUser: 2,
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body.perk).toMatchObject({ startsAt: opens, maxPerUser: 2 });
    platform.clock.advance(1_000);
    const early = await platform.signedPost(
      '/services/perks/redeem',
      { brandId: brandA.brandId, perkId, userIdentifier: MEMBER },
      brandA.securityKey,
    );
    expect(early.status).toBe(409);
    expect(early.body.details).toMatchObject({ reason: 'outside_window', startsAt: opens });
    const catalogue = await platform.get(`/services/perks/${brandA.brandId}`);
    expect(catalogue.body.perks[0]).toMatchObject({ active: true, available: false });

    const added = await ownerA.request('POST', `/brands/${brandA.brandId}/perks/${perkId}/constraints`, {
      kind: 'min_balance',
      amount: 50,
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const detail = await ownerA.request('GET', `/brands/${brandA.brandId}/perks/${perkId}`);
    expect(detail.body.constraints).toEqual([expect.objectContaining({ kind: 'min_balance', config: { amount: 50 } })]);
    const removed = await ownerA.request(
      'DELETE',
      `/brands/${brandA.brandId}/perks/${perkId}/constraints/${added.body.constraint.constraintId}`,
    );
    expect(removed.status).toBe(200);
    expect((await auditRows('perk.constraint.add')).at(-1)?.actor).toBe('portal:owner@a.example.com');
    const reopened = await ownerA.request('PATCH', `/brands/${brandA.brandId}/perks/${perkId}`, { startsAt: null });
    expect(reopened.body.perk.startsAt).toBeNull();
  });
});

describe('portal members', () => {
  it('finds members by e-mail, platform identity and wallet, only among the brand’s own', async () => {
    const search = async (browser: PortalBrowser, brandId: string, q: string) => {
      const answer = await browser.request('GET', `/brands/${brandId}/loyalty-members?q=${encodeURIComponent(q)}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return answer.body.members.map((member: { userKey: string }) => member.userKey);
    };
    expect(await search(viewerA, brandA.brandId, 'shopper@')).toEqual([MEMBER]);
    expect(await search(viewerA, brandA.brandId, 'discord:424242')).toEqual([DISCORD_MEMBER]);
    expect(await search(viewerA, brandA.brandId, '424242')).toEqual([DISCORD_MEMBER]);
    expect(await search(viewerA, brandA.brandId, wallet)).toEqual([MEMBER]);
    expect(await search(viewerA, brandA.brandId, wallet.toLowerCase())).toEqual([MEMBER]);
    // A LIKE wildcard is only a character: `%` finds nothing.
    expect(await search(viewerA, brandA.brandId, '%%')).toEqual([]);
    // Brand B's member is not brand A's, and the reverse.
    expect(await search(viewerA, brandA.brandId, 'only-b@')).toEqual([]);
    expect(await search(ownerB, brandB.brandId, 'shopper@')).toEqual([]);
    const short = await viewerA.request('GET', `/brands/${brandA.brandId}/loyalty-members?q=s`);
    expect(short.status).toBe(400);
  });

  it("a member's page: balances from the ledger, a refused event with its reason, the redemption", async () => {
    expect((await signedEvent(brandA, MEMBER, 'daily')).status).toBe(200);
    const refused = await signedEvent(brandA, MEMBER, 'daily');
    expect(refused.status).toBe(429);
    const page = await viewerA.request(
      'GET',
      `/brands/${brandA.brandId}/loyalty-members/${encodeURIComponent(MEMBER)}`,
    );
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body).toMatchObject({
      userKey: MEMBER,
      accountKey: MEMBER,
      walletAddress: wallet,
      ledger: { earned: 305, acceptedEvents: 4, redeemed: 150 },
    });
    expect(page.body.balance.onChain + page.body.balance.pending).toBe(305 - 150);
    expect(page.body.events[0]).toMatchObject({ eventType: 'daily', status: 'rejected', reason: 'COOLDOWN_ACTIVE' });
    expect(page.body.redemptions).toEqual([expect.objectContaining({ perkId, status: 'confirmed' })]);
    expect(page.body.identities).toEqual([expect.objectContaining({ identityKey: MEMBER, primary: true })]);
    expect(page.body.achievements.length).toBeGreaterThan(0);
  });

  it('a manual award needs a reason, goes through the event pipeline, and is audited with the portal user', async () => {
    const path = `/brands/${brandA.brandId}/loyalty-members/${encodeURIComponent(MEMBER)}/awards`;
    const noReason = await ownerA.request('POST', path, { amount: 40 });
    expect(noReason.status).toBe(400);
    expect(noReason.body.details.errors).toEqual([expect.stringMatching(/^reason: is required/)]);
    const blank = await ownerA.request('POST', path, { amount: 40, reason: '   ' });
    expect(blank.status).toBe(400);

    platform.clock.advance(1_000); // after the refused event, so it is first in the history
    const awarded = await ownerA.request('POST', path, { amount: 40, reason: 'Sorry for the late delivery' });
    expect(awarded.status, JSON.stringify(awarded.body)).toBe(200);
    expect(awarded.body).toMatchObject({ rewardAmount: 40, walletAddress: wallet });
    const page = await ownerA.request('GET', `/brands/${brandA.brandId}/loyalty-members/${encodeURIComponent(MEMBER)}`);
    expect(page.body.ledger.earned).toBe(345);
    expect(page.body.events[0]).toMatchObject({
      eventId: awarded.body.eventId,
      eventType: 'manual_award',
      status: 'accepted',
      rewardAmount: 40,
      sentBy: 'portal:owner@a.example.com',
      note: 'Sorry for the late delivery',
    });
    const audit = await auditRows('member.award');
    expect(audit.at(-1)).toMatchObject({ actor: 'portal:owner@a.example.com', subject: brandA.brandId });
    expect(audit.at(-1)?.details).toMatchObject({ amount: 40, reason: 'Sorry for the late delivery', userKey: MEMBER });
    await waitForMintsSettled(platform);
    const settled = await ownerA.request(
      'GET',
      `/brands/${brandA.brandId}/loyalty-members/${encodeURIComponent(MEMBER)}`,
    );
    expect(settled.body.balance).toMatchObject({ onChain: 345 - 150, pending: 0 });
  });
});

describe('roles, CSRF and brand isolation', () => {
  it('a viewer reads but every change is refused with 403, and nothing changes', async () => {
    const a = brandA.brandId;
    const member = encodeURIComponent(MEMBER);
    const changes: [string, string, unknown][] = [
      ['POST', `/brands/${a}/perks`, { name: 'Viewer perk', cost: 1 }],
      ['PATCH', `/brands/${a}/perks/${perkId}`, { cost: 1 }],
      ['POST', `/brands/${a}/perks/${perkId}/constraints`, { kind: 'min_balance', amount: 1 }],
      ['POST', `/brands/${a}/loyalty-members/${member}/awards`, { amount: 1, reason: 'viewer says so' }],
    ];
    const eventsBefore = await platform.deps.db.selectFrom('events').select('id').execute();
    for (const [method, path, body] of changes) {
      expect((await viewerA.request(method, path, body)).status, `${method} ${path}`).toBe(403);
    }
    const perks = await ownerA.request('GET', `/brands/${a}/perks`);
    expect(perks.body.perks).toEqual([expect.objectContaining({ perkId, cost: 150 })]);
    expect(await platform.deps.db.selectFrom('events').select('id').execute()).toHaveLength(eventsBefore.length);
  });

  it('a change without the CSRF token is refused and changes nothing', async () => {
    const a = brandA.brandId;
    const member = encodeURIComponent(MEMBER);
    const eventsBefore = await platform.deps.db.selectFrom('events').select('id').execute();
    const attempts: [string, string, unknown][] = [
      ['POST', `/brands/${a}/perks`, { name: 'Forged perk', cost: 1 }],
      ['PATCH', `/brands/${a}/perks/${perkId}`, { cost: 1 }],
      ['POST', `/brands/${a}/loyalty-members/${member}/awards`, { amount: 999, reason: 'forged' }],
    ];
    for (const [method, path, body] of attempts) {
      const answer = await ownerA.request(method, path, body, { csrf: false });
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.error).toMatch(/CSRF/);
    }
    const perks = await ownerA.request('GET', `/brands/${a}/perks`);
    expect(perks.body.perks).toEqual([expect.objectContaining({ perkId, cost: 150 })]);
    expect(await platform.deps.db.selectFrom('events').select('id').execute()).toHaveLength(eventsBefore.length);
  });

  it("an owner of brand B gets 403/404 for brand A's perks and members, through either brand's path", async () => {
    const a = brandA.brandId;
    const b = brandB.brandId;
    const member = encodeURIComponent(MEMBER);
    const constraint = '00000000-0000-4000-8000-000000000000';
    const attempts: [string, string, unknown?][] = [
      ['GET', `/brands/${a}/perks`],
      ['POST', `/brands/${a}/perks`, { name: 'Mole perk', cost: 1 }],
      ['GET', `/brands/${a}/perks/${perkId}`],
      ['PATCH', `/brands/${a}/perks/${perkId}`, { cost: 1 }],
      ['POST', `/brands/${a}/perks/${perkId}/constraints`, { kind: 'min_balance', amount: 1 }],
      ['DELETE', `/brands/${a}/perks/${perkId}/constraints/${constraint}`],
      ['GET', `/brands/${a}/loyalty-members?q=shopper`],
      ['GET', `/brands/${a}/loyalty-members/${member}`],
      ['GET', `/brands/${a}/loyalty-members/${member}/tier`],
      ['POST', `/brands/${a}/loyalty-members/${member}/awards`, { amount: 1, reason: 'mole' }],
      ['POST', `/brands/${a}/loyalty-members/${member}/deductions`, { amount: 1, reason: 'mole' }],
      ['POST', `/brands/${a}/perks/${perkId}/archive`],
      ['POST', `/brands/${a}/perks/${perkId}/restore`],
      ['POST', `/brands/${a}/loyalty-members/${member}/block`, { reason: 'mole' }],
      ['DELETE', `/brands/${a}/loyalty-members/${member}/block`],
      // Brand A's ids under brand B's own path.
      ['GET', `/brands/${b}/perks/${perkId}`],
      ['PATCH', `/brands/${b}/perks/${perkId}`, { cost: 1 }],
      ['POST', `/brands/${b}/perks/${perkId}/constraints`, { kind: 'min_balance', amount: 1 }],
      ['DELETE', `/brands/${b}/perks/${perkId}/constraints/${constraint}`],
      ['GET', `/brands/${b}/loyalty-members/${member}`],
      ['POST', `/brands/${b}/loyalty-members/${member}/awards`, { amount: 1, reason: 'mole' }],
      ['POST', `/brands/${b}/perks/${perkId}/archive`],
      ['POST', `/brands/${b}/loyalty-members/${member}/block`, { reason: 'mole' }],
    ];
    for (const [method, path, body] of attempts) {
      const answer = await ownerB.request(method, path, body);
      expect([403, 404], `${method} ${path}: ${answer.status}`).toContain(answer.status);
    }
    const perks = await ownerA.request('GET', `/brands/${a}/perks`);
    expect(perks.body.perks).toEqual([expect.objectContaining({ perkId, cost: 150 })]);
    // Every route of these pages is in the OpenAPI document, and each was tried above.
    const documented = Object.keys((await platform.get('/openapi.json')).body.paths).filter((p) =>
      /^\/portal\/api\/brands\/\{brandId\}\/(perks|loyalty-members)/.test(p),
    );
    const tried = new Set(
      attempts.map(([, path]) =>
        `/portal/api${path}`
          .replace(/\?.*$/, '')
          .replace(a, '{brandId}')
          .replace(b, '{brandId}')
          .replace(`/perks/${perkId}`, '/perks/{perkId}')
          .replace(constraint, '{constraintId}')
          .replace(member, '{userKey}'),
      ),
    );
    expect(new Set(documented)).toEqual(tried);
  });
});
