import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { PortalBrowser, portalMember, portalOperator } from '../../../test/portal-browser.ts';

// Issue 33 §1: an invite (or any link) to an e-mail that already has an account never touches that account.
// Brand B's owner invites brand A's owner and a platform operator; with no mail server the link is shown to B's
// owner, who opens it. Everything goes through the real routes, on PGlite and PostgreSQL.

let platform: TestPlatform;
let brandA: { brandId: string };
let brandB: { brandId: string };
let ownerA: PortalBrowser;
let operator: PortalBrowser;
let ownerB: PortalBrowser;
const PASSWORD = 'correct horse battery';
const ATTACKER_PASSWORD = 'attacker chosen password';

const tokenOf = (inviteUrl: string) => new URL(inviteUrl).hash.replace('#token=', '');

async function inviteFromB(email: string, role: 'owner' | 'admin' | 'viewer') {
  const sent = await ownerB.request('POST', `/brands/${brandB.brandId}/invites`, { email, role });
  expect(sent.status).toBe(201);
  return sent.body.inviteUrl as string;
}

/** Someone holding only the link (B's owner in another browser) chooses a password with it. */
async function openLinkWithPassword(inviteUrl: string) {
  const attacker = new PortalBrowser(platform, '10.9.0.1');
  await attacker.session();
  const answer = await attacker.request('POST', '/invites/accept', {
    token: tokenOf(inviteUrl),
    password: ATTACKER_PASSWORD,
  });
  return { attacker, answer };
}

async function signInAs(email: string, password: string, ip = '10.9.1.1') {
  const browser = new PortalBrowser(platform, ip);
  await browser.session();
  const answer = await browser.request('POST', '/sign-in', { email, password });
  return { browser, status: answer.status };
}

async function auditActions(browser: PortalBrowser, brandId: string) {
  const audit = await browser.request('GET', `/brands/${brandId}/audit`);
  expect(audit.status).toBe(200);
  return audit.body.entries as { actor: string; action: string; details: Record<string, unknown> }[];
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_TRUST_PROXY: 'true' });
  brandA = await platform.createBrand({ name: 'Brand A', domain: 'a.example.com' });
  brandB = await platform.createBrand({ name: 'Brand B', domain: 'b.example.com' });
  ownerA = await portalMember(platform, brandA.brandId, 'owner@a.example.com', 'owner');
  operator = await portalOperator(platform, 'ops@platform.example');
  ownerB = await portalMember(platform, brandB.brandId, 'owner@b.example.com', 'owner');
});

afterAll(async () => {
  await platform?.stop();
});

describe('an invite to an existing account', () => {
  it("B's owner inviting A's owner cannot set A's password, end A's sessions or sign in as A", async () => {
    const inviteUrl = await inviteFromB('owner@a.example.com', 'owner');
    const { attacker, answer } = await openLinkWithPassword(inviteUrl);
    expect(answer.status).toBe(409);
    expect(answer.body.error).toMatch(/already has a pts portal account: sign in/);
    expect(answer.headers.getSetCookie().some((c) => c.startsWith('pts_portal_session='))).toBe(false);
    expect((await attacker.session()).signedIn).toBe(false);
    // A's own password still works, the attacker's does not, and A's open session was not ended.
    expect((await signInAs('owner@a.example.com', PASSWORD)).status).toBe(200);
    expect((await signInAs('owner@a.example.com', ATTACKER_PASSWORD, '10.9.1.2')).status).toBe(401);
    expect((await ownerA.session()).signedIn).toBe(true);
    expect((await ownerA.session()).brands).toEqual([expect.objectContaining({ brandId: brandA.brandId })]);
    // Nothing joined B yet.
    const team = await ownerB.request('GET', `/brands/${brandB.brandId}/team`);
    expect(team.body.members.map((m: { email: string }) => m.email)).toEqual(['owner@b.example.com']);
  });

  it("B's owner inviting an operator gets neither the operator's account nor its flag", async () => {
    const inviteUrl = await inviteFromB('ops@platform.example', 'viewer');
    const { attacker, answer } = await openLinkWithPassword(inviteUrl);
    expect(answer.status).toBe(409);
    expect((await attacker.session()).signedIn).toBe(false);
    expect((await attacker.request('GET', '/operator/brands')).status).toBe(401);
    expect((await signInAs('ops@platform.example', PASSWORD)).status).toBe(200);
    expect((await signInAs('ops@platform.example', ATTACKER_PASSWORD, '10.9.1.3')).status).toBe(401);
    const session = await operator.session();
    expect(session).toMatchObject({ signedIn: true, user: { email: 'ops@platform.example', operator: true } });
  });

  it('an operator invite (admin token) to an existing account does not set its password either', async () => {
    const invite = await platform.post(
      '/admin/portal/operator-invites',
      { email: 'owner@a.example.com' },
      { authorization: `Bearer ${platform.deps.adminToken}` },
    );
    expect(invite.status).toBe(201);
    const { answer } = await openLinkWithPassword(invite.body.inviteUrl);
    expect(answer.status).toBe(409);
    expect((await signInAs('owner@a.example.com', PASSWORD, '10.9.1.4')).status).toBe(200);
    expect((await ownerA.session()).user.operator).toBe(false);
  });

  it('the invited person accepts by signing in with their own password; the join is audited', async () => {
    const inviteUrl = await inviteFromB('owner@a.example.com', 'admin');
    // Someone else signed in cannot use it, and their attempt leaves it usable.
    const wrongPerson = await ownerB.request('POST', '/invites/join', { token: tokenOf(inviteUrl) });
    expect(wrongPerson.status).toBe(403);
    expect(wrongPerson.body.error).toMatch(/for another e-mail address/);
    // Signed out, the link cannot be joined.
    const signedOut = new PortalBrowser(platform, '10.9.2.1');
    await signedOut.session();
    expect((await signedOut.request('POST', '/invites/join', { token: tokenOf(inviteUrl) })).status).toBe(401);

    const joined = await ownerA.request('POST', '/invites/join', { token: tokenOf(inviteUrl) });
    expect(joined).toMatchObject({
      status: 200,
      body: { success: true, brandId: brandB.brandId, role: 'admin', operator: false },
    });
    // The same session goes on, now with both brands; the password is unchanged.
    const session = await ownerA.session();
    expect(session.signedIn).toBe(true);
    expect(session.brands.map((b: { brandId: string }) => b.brandId).sort()).toEqual(
      [brandA.brandId, brandB.brandId].sort(),
    );
    expect((await signInAs('owner@a.example.com', PASSWORD, '10.9.1.5')).status).toBe(200);
    const entries = await auditActions(ownerB, brandB.brandId);
    expect(entries).toContainEqual(
      expect.objectContaining({
        actor: 'portal:owner@a.example.com',
        action: 'portal.invite_accepted',
        details: expect.objectContaining({ email: 'owner@a.example.com', role: 'admin', existingAccount: true }),
      }),
    );
    // The link worked once.
    expect((await ownerA.request('POST', '/invites/join', { token: tokenOf(inviteUrl) })).status).toBe(400);
  });

  it('a new person still sets a password with the link, and that join is audited too', async () => {
    const inviteUrl = await inviteFromB('new@b.example.com', 'viewer');
    const { attacker: newcomer, answer } = await openLinkWithPassword(inviteUrl);
    expect(answer.status).toBe(200);
    expect((await newcomer.session()).user.email).toBe('new@b.example.com');
    const entries = await auditActions(ownerB, brandB.brandId);
    expect(entries).toContainEqual(
      expect.objectContaining({
        actor: 'portal:new@b.example.com',
        action: 'portal.invite_accepted',
        details: expect.objectContaining({ existingAccount: false }),
      }),
    );
  });
});
