import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { PortalBrowser, portalMember } from '../../../test/portal-browser.ts';

// The team itself (issue 33 §10) through the real routes, on PGlite and PostgreSQL: removing a teammate,
// revoking an invite, leaving, ending someone's sessions; every change audited, the last owner always kept,
// and a role change or removal voiding that person's pending invites (a demoted owner's self-sent link).

let platform: TestPlatform;
let brandNo = 0;

async function newBrand() {
  brandNo += 1;
  return platform.createBrand({ name: `Team ${brandNo}`, domain: `team${brandNo}.example.com` });
}

async function userIdOf(browser: PortalBrowser, brandId: string, email: string): Promise<string> {
  const team = await browser.request('GET', `/brands/${brandId}/team`);
  expect(team.status).toBe(200);
  const member = team.body.members.find((m: { email: string }) => m.email === email);
  if (!member) throw new Error(`${email} is not in the team`);
  return member.userId;
}

const auditOf = (brandId: string, action: string) =>
  platform.deps.db
    .selectFrom('audit_log')
    .selectAll()
    .where('brand_id', '=', brandId)
    .where('action', '=', action)
    .orderBy('id')
    .execute();

const ownersOf = async (brandId: string) =>
  (
    await platform.deps.db
      .selectFrom('portal_memberships')
      .select('user_id')
      .where('brand_id', '=', brandId)
      .where('role', '=', 'owner')
      .execute()
  ).length;

/** Opens an invite link in a fresh browser: the accept answer (not asserted). */
async function acceptLink(inviteUrl: string, password = 'a new password 123') {
  const browser = new PortalBrowser(platform, '10.0.0.9');
  await browser.session();
  const token = new URL(inviteUrl).hash.replace('#token=', '');
  return browser.request('POST', '/invites/accept', { token, password });
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_TRUST_PROXY: 'true' });
});

afterAll(async () => {
  await platform?.stop();
});

describe('removing a teammate', () => {
  it("ends the person's access to the brand at once, audited; an admin cannot remove anyone", async () => {
    const brand = await newBrand();
    const owner = await portalMember(platform, brand.brandId, 'owner@remove.example', 'owner');
    const admin = await portalMember(platform, brand.brandId, 'admin@remove.example', 'admin');
    const viewer = await portalMember(platform, brand.brandId, 'viewer@remove.example', 'viewer');
    const viewerId = await userIdOf(owner, brand.brandId, 'viewer@remove.example');
    expect((await viewer.request('GET', `/brands/${brand.brandId}/loyalty-members?q=shopper`)).status).toBe(200);

    const byAdmin = await admin.request('DELETE', `/brands/${brand.brandId}/members/${viewerId}`);
    expect(byAdmin.status).toBe(403);
    const noCsrf = await owner.request('DELETE', `/brands/${brand.brandId}/members/${viewerId}`, undefined, {
      csrf: false,
    });
    expect(noCsrf.status).toBe(403);

    const removed = await owner.request('DELETE', `/brands/${brand.brandId}/members/${viewerId}`);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body).toMatchObject({ success: true, userId: viewerId, email: 'viewer@remove.example' });

    // The removed person's very next requests: the brand is gone for them, member data included.
    expect((await viewer.request('GET', `/brands/${brand.brandId}/loyalty-members?q=shopper`)).status).toBe(404);
    expect((await viewer.request('GET', `/brands/${brand.brandId}/team`)).status).toBe(404);
    expect((await viewer.session()).brands).toEqual([]);
    const team = await owner.request('GET', `/brands/${brand.brandId}/team`);
    expect(team.body.members.map((m: { email: string }) => m.email)).not.toContain('viewer@remove.example');
    const audit = await auditOf(brand.brandId, 'portal.member_remove');
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actor).toBe('portal:owner@remove.example');
    expect(audit[0]!.details).toMatchObject({ userId: viewerId, email: 'viewer@remove.example', role: 'viewer' });

    const again = await owner.request('DELETE', `/brands/${brand.brandId}/members/${viewerId}`);
    expect(again.status).toBe(404);
    expect(again.body.error).toMatch(/No member/);
    const bad = await owner.request('DELETE', `/brands/${brand.brandId}/members/not-a-uuid`);
    expect(bad.status).toBe(400);
    expect(bad.body.details.errors.join()).toMatch(/userId: is not a user id/);
  });

  it('keeps the last owner: removing or leaving answers 409 with what to do', async () => {
    const brand = await newBrand();
    const owner = await portalMember(platform, brand.brandId, 'only@owner.example', 'owner');
    const ownerId = await userIdOf(owner, brand.brandId, 'only@owner.example');
    const self = await owner.request('DELETE', `/brands/${brand.brandId}/members/${ownerId}`);
    expect(self.status).toBe(409);
    expect(self.body.error).toMatch(/last owner of this brand: make someone else owner/);
    const leave = await owner.request('POST', `/brands/${brand.brandId}/leave`);
    expect(leave.status).toBe(409);
    expect(leave.body.error).toMatch(/You are the last owner .* make someone else owner before you leave/);
    expect(await ownersOf(brand.brandId)).toBe(1);
  });

  it('two owners removing each other at the same moment: one owner remains', async () => {
    for (let round = 0; round < 4; round++) {
      const brand = await newBrand();
      const first = await portalMember(platform, brand.brandId, `first${round}@race.example`, 'owner');
      const second = await portalMember(platform, brand.brandId, `second${round}@race.example`, 'owner');
      const firstId = await userIdOf(first, brand.brandId, `first${round}@race.example`);
      const secondId = await userIdOf(first, brand.brandId, `second${round}@race.example`);
      const answers = await Promise.all([
        first.request('DELETE', `/brands/${brand.brandId}/members/${secondId}`),
        second.request('DELETE', `/brands/${brand.brandId}/members/${firstId}`),
      ]);
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses[0]).toBe(200);
      expect([404, 409]).toContain(statuses[1]);
      expect(await ownersOf(brand.brandId)).toBe(1);
      expect(await auditOf(brand.brandId, 'portal.member_remove')).toHaveLength(1);
    }
  });

  it('two owners demoting each other at the same moment: one owner remains', async () => {
    const brand = await newBrand();
    const first = await portalMember(platform, brand.brandId, 'first@demote.example', 'owner');
    const second = await portalMember(platform, brand.brandId, 'second@demote.example', 'owner');
    const firstId = await userIdOf(first, brand.brandId, 'first@demote.example');
    const secondId = await userIdOf(first, brand.brandId, 'second@demote.example');
    const answers = await Promise.all([
      first.request('PATCH', `/brands/${brand.brandId}/members/${secondId}`, { role: 'viewer' }),
      second.request('PATCH', `/brands/${brand.brandId}/members/${firstId}`, { role: 'viewer' }),
    ]);
    expect(answers.map((a) => a.status).sort()[0]).toBe(200);
    expect(await ownersOf(brand.brandId)).toBe(1);
  });
});

describe('invites that must not outlive a change', () => {
  it("a demoted owner's self-sent invite, and the ones they sent others, stop working", async () => {
    const brand = await newBrand();
    const owner = await portalMember(platform, brand.brandId, 'boss@demoted.example', 'owner');
    const demoted = await portalMember(platform, brand.brandId, 'demoted@demoted.example', 'owner');
    const selfInvite = await demoted.request('POST', `/brands/${brand.brandId}/invites`, {
      email: 'demoted@demoted.example',
      role: 'owner',
    });
    expect(selfInvite.status).toBe(201);
    const friendInvite = await demoted.request('POST', `/brands/${brand.brandId}/invites`, {
      email: 'friend@elsewhere.example',
      role: 'owner',
    });
    expect(friendInvite.status).toBe(201);
    const demotedId = await userIdOf(owner, brand.brandId, 'demoted@demoted.example');

    const changed = await owner.request('PATCH', `/brands/${brand.brandId}/members/${demotedId}`, { role: 'viewer' });
    expect(changed.status).toBe(200);
    const team = await owner.request('GET', `/brands/${brand.brandId}/team`);
    expect(team.body.pendingInvites).toEqual([]);

    expect((await acceptLink(selfInvite.body.inviteUrl)).status).toBe(400);
    expect((await acceptLink(friendInvite.body.inviteUrl)).status).toBe(400);
    const roles = await platform.deps.db
      .selectFrom('portal_memberships as m')
      .innerJoin('portal_users as u', 'u.id', 'm.user_id')
      .select(['u.email', 'm.role'])
      .where('m.brand_id', '=', brand.brandId)
      .orderBy('u.email')
      .execute();
    expect(roles).toEqual([
      { email: 'boss@demoted.example', role: 'owner' },
      { email: 'demoted@demoted.example', role: 'viewer' },
    ]);
    // Still a viewer: the demoted owner cannot take the other owner's role away.
    const strike = await demoted.request('PATCH', `/brands/${brand.brandId}/members/${demotedId}`, { role: 'owner' });
    expect(strike.status).toBe(403);
    const [audit] = await auditOf(brand.brandId, 'portal.role_change');
    expect(audit!.details).toMatchObject({ from: 'owner', to: 'viewer', invitesRevoked: 2 });
  });

  it('removing a person voids the invites addressed to them and those they sent', async () => {
    const brand = await newBrand();
    const owner = await portalMember(platform, brand.brandId, 'boss@removed.example', 'owner');
    const leaver = await portalMember(platform, brand.brandId, 'leaver@removed.example', 'owner');
    const sent = await leaver.request('POST', `/brands/${brand.brandId}/invites`, {
      email: 'alt@removed.example',
      role: 'admin',
    });
    expect(sent.status).toBe(201);
    const leaverId = await userIdOf(owner, brand.brandId, 'leaver@removed.example');
    const removed = await owner.request('DELETE', `/brands/${brand.brandId}/members/${leaverId}`);
    expect(removed.status).toBe(200);
    expect(removed.body.invitesRevoked).toBe(1);
    expect((await acceptLink(sent.body.inviteUrl)).status).toBe(400);
    expect((await leaver.request('GET', `/brands/${brand.brandId}`)).status).toBe(404);
  });
});

describe('revoking an invite', () => {
  it('voids the link, audited; a second revoke, a bad e-mail or a non-owner are refused', async () => {
    const brand = await newBrand();
    const owner = await portalMember(platform, brand.brandId, 'owner@revoke.example', 'owner');
    const admin = await portalMember(platform, brand.brandId, 'admin@revoke.example', 'admin');
    const sent = await owner.request('POST', `/brands/${brand.brandId}/invites`, {
      email: 'oops@wrong.example',
      role: 'admin',
    });
    expect(sent.status).toBe(201);
    const path = `/brands/${brand.brandId}/invites/${encodeURIComponent('oops@wrong.example')}`;
    expect((await admin.request('DELETE', path)).status).toBe(403);

    const revoked = await owner.request('DELETE', path);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body).toEqual({ success: true, email: 'oops@wrong.example', invitesRevoked: 1 });
    expect((await owner.request('GET', `/brands/${brand.brandId}/team`)).body.pendingInvites).toEqual([]);
    const accepted = await acceptLink(sent.body.inviteUrl);
    expect(accepted.status).toBe(400);
    expect(accepted.body.error).toMatch(/invalid, expired or already used/);
    const [audit] = await auditOf(brand.brandId, 'portal.invite_revoke');
    expect(audit).toMatchObject({ actor: 'portal:owner@revoke.example' });
    expect(audit!.details).toMatchObject({ email: 'oops@wrong.example', invitesRevoked: 1 });

    const again = await owner.request('DELETE', path);
    expect(again.status).toBe(404);
    expect(again.body.error).toMatch(/No pending invite for oops@wrong.example/);
    const bad = await owner.request('DELETE', `/brands/${brand.brandId}/invites/not-an-email`);
    expect(bad.status).toBe(400);
    expect(bad.body.details.errors.join()).toMatch(/^email: /);
  });
});

describe('leaving a brand', () => {
  it('any role may leave; access ends at once; audited', async () => {
    const brand = await newBrand();
    await portalMember(platform, brand.brandId, 'owner@leave.example', 'owner');
    const admin = await portalMember(platform, brand.brandId, 'admin@leave.example', 'admin');
    const left = await admin.request('POST', `/brands/${brand.brandId}/leave`);
    expect(left.status, JSON.stringify(left.body)).toBe(200);
    expect(left.body).toMatchObject({ success: true, email: 'admin@leave.example', role: 'admin' });
    expect((await admin.request('GET', `/brands/${brand.brandId}/team`)).status).toBe(404);
    expect((await admin.request('POST', `/brands/${brand.brandId}/leave`)).status).toBe(404);
    const [audit] = await auditOf(brand.brandId, 'portal.leave');
    expect(audit).toMatchObject({ actor: 'portal:admin@leave.example' });
  });
});

describe("ending a person's sessions", () => {
  it('every session of the teammate answers 401 at once; audited; owners only; members of this brand only', async () => {
    const brand = await newBrand();
    const other = await newBrand();
    const owner = await portalMember(platform, brand.brandId, 'owner@sessions.example', 'owner');
    const admin = await portalMember(platform, brand.brandId, 'admin@sessions.example', 'admin');
    const adminElsewhere = new PortalBrowser(platform, '10.0.0.7');
    await adminElsewhere.session();
    expect(
      (
        await adminElsewhere.request('POST', '/sign-in', {
          email: 'admin@sessions.example',
          password: 'correct horse battery',
        })
      ).status,
    ).toBe(200);
    const outsider = await portalMember(platform, other.brandId, 'outsider@sessions.example', 'owner');
    const adminId = await userIdOf(owner, brand.brandId, 'admin@sessions.example');
    const ownerId = await userIdOf(owner, brand.brandId, 'owner@sessions.example');
    const outsiderId = await userIdOf(outsider, other.brandId, 'outsider@sessions.example');

    expect((await admin.request('POST', `/brands/${brand.brandId}/members/${ownerId}/sessions/end`)).status).toBe(403);
    const notHere = await owner.request('POST', `/brands/${brand.brandId}/members/${outsiderId}/sessions/end`);
    expect(notHere.status).toBe(404);
    expect((await outsider.request('GET', `/brands/${other.brandId}/team`)).status).toBe(200);

    const ended = await owner.request('POST', `/brands/${brand.brandId}/members/${adminId}/sessions/end`);
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    expect(ended.body).toEqual({ success: true, userId: adminId, sessionsEnded: 2 });
    for (const browser of [admin, adminElsewhere]) {
      expect((await browser.request('GET', `/brands/${brand.brandId}/team`)).status).toBe(401);
      expect((await browser.session()).signedIn).toBe(false);
    }
    expect((await owner.request('GET', `/brands/${brand.brandId}/team`)).status).toBe(200);
    const [audit] = await auditOf(brand.brandId, 'portal.sessions_end');
    expect(audit).toMatchObject({ actor: 'portal:owner@sessions.example' });
    expect(audit!.details).toMatchObject({ userId: adminId, email: 'admin@sessions.example', sessionsEnded: 2 });
  });
});
