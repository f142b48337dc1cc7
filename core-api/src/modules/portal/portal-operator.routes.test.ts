import { randomBytes } from 'node:crypto';
import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPts } from '../../../test/cli.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { acceptInviteUrl, type PortalBrowser, portalMember, portalOperator } from '../../../test/portal-browser.ts';

// Platform operators in the portal (issue 22, "Operators"): made only with the admin token, they list every
// brand (members as the dashboard counts them, team status), create brands through the brands service, invite
// a brand's first owner through the team service, read any brand's pages and change none; non-operators get
// 403; CSRF; every change audited as `operator:<email>`.

let platform: TestPlatform;
let brandA: CreatedBrand;
let brandB: CreatedBrand;
let operator: PortalBrowser;
let ownerA: PortalBrowser;
const RULE = { eventType: 'op_check', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 };
const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });

beforeAll(async () => {
  platform = await startTestPlatform();
  brandA = await platform.createBrand({ name: 'Brand A', domain: 'a.example.com', rules: [RULE] });
  brandB = await platform.createBrand({ name: 'Brand B', domain: 'b.example.com', rules: [RULE] });
  ownerA = await portalMember(platform, brandA.brandId, 'alice@a.example.com', 'owner');
  operator = await portalOperator(platform, 'ops@platform.example');
});

afterAll(async () => {
  await platform?.stop();
});

const event = (brand: CreatedBrand, identityKey: string) =>
  platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType: RULE.eventType, userEmail: identityKey },
    brand.securityKey,
  );

describe('becoming an operator', () => {
  it('needs the admin token; the link works once and flags the person operator', async () => {
    expect((await platform.post('/admin/portal/operator-invites', { email: 'x@platform.example' })).status).toBe(401);
    const bad = await platform.post('/admin/portal/operator-invites', { email: 'not an email' }, admin());
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/email/);

    const session = await operator.session();
    expect(session.user).toMatchObject({ email: 'ops@platform.example', operator: true });
    expect(session.brands).toEqual([]);
    expect((await ownerA.session()).user.operator).toBe(false);

    const invite = await platform.post('/admin/portal/operator-invites', { email: 'once@platform.example' }, admin());
    expect(invite.status).toBe(201);
    expect(invite.body).toMatchObject({ email: 'once@platform.example', operator: true });
    await acceptInviteUrl(platform, invite.body.inviteUrl);
    await expect(acceptInviteUrl(platform, invite.body.inviteUrl)).rejects.toThrow(/accept failed: 400/);
  });

  it('pts portal invite --operator --json prints the link, which makes an operator; --brand with it is a usage error', async () => {
    const cli = (argv: string[]) => runPts(platform, argv);
    const run = await cli(['portal', 'invite', '--operator', '--email', 'cli-ops@platform.example', '--json']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const printed = JSON.parse(run.stdout);
    expect(Object.keys(printed).sort()).toEqual(['email', 'expiresAt', 'inviteUrl', 'operator']);
    const browser = await acceptInviteUrl(platform, printed.inviteUrl);
    expect((await browser.session()).user.operator).toBe(true);
    expect((await browser.request('GET', '/operator/brands')).status).toBe(200);

    const mixed = await cli(['portal', 'invite', '--operator', '--email', 'x@y.example', '--brand', brandA.brandId]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/leave out --brand and --role/);
    const noEmail = await cli(['portal', 'invite', '--operator']);
    expect(noEmail.code).toBe(2);
    expect(noEmail.stderr).toMatch(/--email is required/);
  });

  it('a brand owner is no operator: every operator route answers 403 and changes nothing', async () => {
    expect((await ownerA.request('GET', '/operator/brands')).status).toBe(403);
    const create = await ownerA.request('POST', '/operator/brands', { name: 'Sneaky', domain: 'sneaky.example' });
    expect(create.status).toBe(403);
    expect(create.body.error).toMatch(/operators/);
    const invite = await ownerA.request('POST', `/operator/brands/${brandB.brandId}/invites`, {
      email: 'mallory@x.example',
      role: 'owner',
    });
    expect(invite.status).toBe(403);
    const brands = (await platform.get('/admin/brands', admin())).body.brands as { name: string }[];
    expect(brands.map((brand) => brand.name)).not.toContain('Sneaky');
    expect((await platform.get(`/admin/brands/${brandB.brandId}`, admin())).status).toBe(200);
    const teamB = await operator.request('GET', `/brands/${brandB.brandId}/team`);
    expect(teamB.body.pendingInvites).toEqual([]);
  });

  it('without the CSRF token an operator changes nothing', async () => {
    const refused = await operator.request(
      'POST',
      '/operator/brands',
      { name: 'No Csrf', domain: 'nocsrf.example' },
      { csrf: false },
    );
    expect(refused.status).toBe(403);
    const names = (await operator.request('GET', '/operator/brands')).body.brands.map((b: { name: string }) => b.name);
    expect(names).not.toContain('No Csrf');
  });
});

describe("the operators' brand list", () => {
  it('lists every brand with the members its dashboard counts and its team status', async () => {
    for (const user of ['m1@x.example', 'm2@x.example', 'm3@x.example']) {
      expect((await event(brandA, user)).status).toBe(200);
    }
    expect((await event(brandB, 'm1@x.example')).status).toBe(200);
    platform.clock.advance(1_000);
    const list = await operator.request('GET', '/operator/brands');
    expect(list.status).toBe(200);
    const byId = new Map(list.body.brands.map((b: { brandId: string }) => [b.brandId, b]));
    const a = byId.get(brandA.brandId) as Record<string, unknown>;
    const b = byId.get(brandB.brandId) as Record<string, unknown>;
    expect(a).toMatchObject({
      name: 'Brand A',
      domain: 'a.example.com',
      members: { total: 3, activeMonth: 3 },
      team: { owners: 1, members: 1, pendingOwnerInvites: 0 },
      status: 'active',
    });
    expect(b).toMatchObject({ members: { total: 1 }, team: { owners: 0, members: 0 }, status: 'no_owner' });
    expect(JSON.stringify(list.body)).not.toMatch(/pts_sk_|pts_ak_/);
    for (const [brand, row] of [
      [brandA, a],
      [brandB, b],
    ] as const) {
      const dashboard = await operator.request('GET', `/brands/${brand.brandId}/dashboard?days=30`);
      expect(dashboard.status).toBe(200);
      expect(row.members).toEqual({
        total: dashboard.body.members.total,
        activeMonth: dashboard.body.members.active.month,
      });
    }
  });
});

describe('creating a brand and inviting its first owner', () => {
  let created: CreatedBrand;

  it('creates the brand through the brands service (keys once, default rules), audited as the operator', async () => {
    const bad = await operator.request('POST', '/operator/brands', { name: '', domain: 'not a domain' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/name|domain/);

    const answer = await operator.request('POST', '/operator/brands', {
      name: '<img src=x onerror=alert(1)> Shop',
      domain: 'shop.example.org',
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    created = answer.body.brand;
    expect(created.securityKey).toMatch(/^pts_sk_/);
    expect(created.apiKey).toMatch(/^pts_ak_/);
    const viaAdmin = await platform.get(`/admin/brands/${created.brandId}`, admin());
    expect(viaAdmin.body.brand).toMatchObject({
      name: '<img src=x onerror=alert(1)> Shop',
      domain: 'shop.example.org',
    });
    const rules = await platform.get(`/admin/brands/${created.brandId}/rules`, admin());
    expect(rules.body.rules.length).toBeGreaterThan(0);
    expect((await event(created, `u${randomBytes(3).toString('hex')}@x.example`)).status).toBeLessThan(500);

    const audit = await operator.request('GET', `/brands/${created.brandId}/audit?actorKind=operator`);
    expect(audit.body.entries).toEqual([
      expect.objectContaining({
        actor: 'operator:ops@platform.example',
        actorKind: 'operator',
        action: 'brand.create',
      }),
    ]);
    const status = (await operator.request('GET', '/operator/brands')).body.brands.find(
      (b: { brandId: string }) => b.brandId === created.brandId,
    );
    expect(status).toMatchObject({ status: 'no_owner', members: { total: expect.any(Number) } });
  });

  it("invites the brand's first owner with the function of pts portal invite; the owner accepts and runs it", async () => {
    const unknown = await operator.request('POST', `/operator/brands/0x${'ab'.repeat(20)}/invites`, {
      email: 'nobody@x.example',
      role: 'owner',
    });
    expect(unknown.status).toBe(404);
    const badRole = await operator.request('POST', `/operator/brands/${created.brandId}/invites`, {
      email: 'olivia@shop.example.org',
      role: 'emperor',
    });
    expect(badRole.status).toBe(400);

    const invite = await operator.request('POST', `/operator/brands/${created.brandId}/invites`, {
      email: 'olivia@shop.example.org',
      role: 'owner',
    });
    expect(invite.status).toBe(201);
    expect(invite.body).toMatchObject({ email: 'olivia@shop.example.org', role: 'owner', brandId: created.brandId });
    const list = async () =>
      (await operator.request('GET', '/operator/brands')).body.brands.find(
        (b: { brandId: string }) => b.brandId === created.brandId,
      );
    expect(await list()).toMatchObject({ status: 'invited', team: { pendingOwnerInvites: 1 } });

    const owner = await acceptInviteUrl(platform, invite.body.inviteUrl);
    const session = await owner.session();
    expect(session.brands).toEqual([{ brandId: created.brandId, brandName: created.name, role: 'owner' }]);
    expect(session.user.operator).toBe(false);
    expect(await list()).toMatchObject({ status: 'active', team: { owners: 1, members: 1, pendingOwnerInvites: 0 } });
    const rule = await owner.request('PUT', `/brands/${created.brandId}/rules/owner_rule`, { rewardAmount: 3 });
    expect(rule.status).toBe(200);

    const audit = (await owner.request('GET', `/brands/${created.brandId}/audit`)).body.entries as {
      actor: string;
      action: string;
    }[];
    expect(audit.map((entry) => `${entry.actor} ${entry.action}`)).toEqual(
      expect.arrayContaining([
        'operator:ops@platform.example portal.invite',
        'portal:olivia@shop.example.org portal.invite_accepted',
        'operator:ops@platform.example brand.create',
      ]),
    );
  });
});

describe("an operator in a brand's pages", () => {
  it('reads any brand as a viewer and changes nothing', async () => {
    const brand = await operator.request('GET', `/brands/${brandB.brandId}`);
    expect(brand.status).toBe(200);
    expect(brand.body.brand.name).toBe('Brand B');
    expect((await operator.request('GET', `/brands/${brandB.brandId}/rules`)).status).toBe(200);
    expect((await operator.request('GET', `/brands/${brandA.brandId}/integrations`)).status).toBe(200);
    const rule = await operator.request('PUT', `/brands/${brandA.brandId}/rules/${RULE.eventType}`, {
      rewardAmount: 999,
    });
    expect(rule.status).toBe(403);
    expect(rule.body.error).toMatch(/viewer/);
    const team = await operator.request('POST', `/brands/${brandA.brandId}/invites`, {
      email: 'x@y.example',
      role: 'owner',
    });
    expect(team.status).toBe(403);
    const rules = (await platform.get(`/admin/brands/${brandA.brandId}/rules`, admin())).body.rules as {
      eventType: string;
      rewardAmount: number;
    }[];
    expect(rules.find((r) => r.eventType === RULE.eventType)?.rewardAmount).toBe(5);
  });

  it('an unknown brand is 404 for an operator too', async () => {
    expect((await operator.request('GET', `/brands/0x${'cd'.repeat(20)}`)).status).toBe(404);
    expect((await operator.request('GET', `/brands/0x${'cd'.repeat(20)}/rules`)).status).toBe(404);
  });
});

describe('removing an operator', () => {
  const cli = (argv: string[]) => runPts(platform, argv);

  it('pts portal remove-operator takes the flag at once; their session stays a brand member only; audited', async () => {
    const leaving = await portalOperator(platform, 'leaving@platform.example');
    await platform.post(
      '/admin/portal/invites',
      { brandId: brandA.brandId, email: 'leaving@platform.example', role: 'viewer' },
      admin(),
    );
    expect((await leaving.request('GET', '/operator/brands')).status).toBe(200);
    expect((await leaving.request('GET', `/brands/${brandB.brandId}/team`)).status).toBe(200);

    const run = await cli(['portal', 'remove-operator', '--email', 'leaving@platform.example', '--json']);
    expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toEqual({
      email: 'leaving@platform.example',
      operator: false,
      wasOperator: true,
      invitesRevoked: 0,
    });
    // The same session, its next request: no operator routes, no brand outside its team.
    expect((await leaving.session()).user.operator).toBe(false);
    expect((await leaving.request('GET', '/operator/brands')).status).toBe(403);
    expect((await leaving.request('GET', `/brands/${brandB.brandId}/team`)).status).toBe(404);
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'portal.operator_remove')
      .execute();
    expect(audit.map((row) => [row.actor, row.subject])).toEqual([['admin', 'leaving@platform.example']]);

    // Once more: nobody to remove, with a message saying so.
    const again = await cli(['portal', 'remove-operator', '--email', 'leaving@platform.example']);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/not a platform operator/);
    expect((await cli(['portal', 'remove-operator'])).stderr).toMatch(/--email is required/);
  });

  it('revokes a pending operator invite, so the link grants nothing; only the admin token may remove', async () => {
    const invite = await platform.post(
      '/admin/portal/operator-invites',
      { email: 'pending@platform.example' },
      admin(),
    );
    expect((await platform.post('/admin/portal/operators/remove', { email: 'pending@platform.example' })).status).toBe(
      401,
    );
    const removed = await platform.post(
      '/admin/portal/operators/remove',
      { email: 'pending@platform.example' },
      admin(),
    );
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body).toMatchObject({ wasOperator: false, invitesRevoked: 1 });
    await expect(acceptInviteUrl(platform, invite.body.inviteUrl)).rejects.toThrow(/accept failed: 400/);
    const bad = await platform.post('/admin/portal/operators/remove', { email: 'not an email' }, admin());
    expect(bad.status).toBe(400);
    // The operator's own session cannot remove another operator (the admin token only).
    const viaPortal = await operator.request('POST', '/operators/remove', { email: 'ops@platform.example' });
    expect(viaPortal.status).toBe(404);
    expect((await operator.session()).user.operator).toBe(true);
  });
});
