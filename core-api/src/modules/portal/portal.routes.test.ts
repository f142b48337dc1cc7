import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { runCli } from '../../cli/run-cli.ts';
import { type PortalRoutesDeps, portalRoutes } from './portal.routes.ts';
import { PORTAL_SESSION_IDLE_MS } from './portal-auth.service.ts';
import { type PortalDashboardDeps, portalDashboardRoutes } from './portal-dashboard.routes.ts';
import { type PortalIntegrationDeps, portalIntegrationRoutes } from './portal-integrations.routes.ts';
import { createPortalMailer } from './portal-mailer.ts';
import { type PortalMemberRoutesDeps, portalMemberRoutes } from './portal-members.routes.ts';
import { inviteMember } from './portal-team.service.ts';

// The portal's JSON API against the real platform: sessions, CSRF, roles, cross-brand isolation, throttling,
// single-use links, the CLI invite and the e-mailed links (nodemailer against a small SMTP server).

let platform: TestPlatform;
let brandA: { brandId: string; securityKey: string };
let brandB: { brandId: string; securityKey: string };
const PASSWORD = 'correct horse battery';

/** A browser: keeps the cookies core-api sets and the CSRF token of the session answer. */
class PortalBrowser {
  cookies = new Map<string, string>();
  csrf = '';
  constructor(readonly ip = '10.0.0.1') {}

  async request(method: string, path: string, body?: unknown, options: { csrf?: boolean } = {}) {
    const headers: Record<string, string> = { 'x-forwarded-for': this.ip };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET' && options.csrf !== false) headers['x-csrf-token'] = this.csrf;
    const response = await fetch(`${platform.url}/portal/api${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const [name, value = ''] = pair!.split('=');
      if (/Max-Age=0/.test(cookie)) this.cookies.delete(name!);
      else this.cookies.set(name!, value);
    }
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  }

  async session() {
    const answer = await this.request('GET', '/session');
    this.csrf = answer.body.csrfToken;
    return answer.body;
  }

  async signIn(email: string, password = PASSWORD) {
    await this.session();
    return this.request('POST', '/sign-in', { email, password });
  }
}

async function invite(brandId: string, email: string, role: 'owner' | 'admin' | 'viewer') {
  const answer = await platform.post(
    '/admin/portal/invites',
    { brandId, email, role },
    { authorization: `Bearer ${platform.deps.adminToken}` },
  );
  expect(answer.status).toBe(201);
  return answer.body as { inviteUrl: string; expiresAt: string };
}

const tokenOf = (inviteUrl: string) => new URL(inviteUrl).hash.replace('#token=', '');

/** A person who accepted an invite: signed in, in their own browser. */
async function member(brandId: string, email: string, role: 'owner' | 'admin' | 'viewer', ip?: string) {
  const { inviteUrl } = await invite(brandId, email, role);
  const browser = new PortalBrowser(ip);
  await browser.session();
  const accepted = await browser.request('POST', '/invites/accept', { token: tokenOf(inviteUrl), password: PASSWORD });
  expect(accepted.status).toBe(200);
  await browser.session();
  return browser;
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_TRUST_PROXY: 'true' });
  brandA = await platform.createBrand({ name: 'Brand A', domain: 'a.example.com' });
  brandB = await platform.createBrand({ name: 'Brand B', domain: 'b.example.com' });
});

afterAll(async () => {
  await platform?.stop();
});

describe('invites and sign-in', () => {
  it('an invite sets the password, signs in with an HttpOnly SameSite=Lax cookie, and works only once', async () => {
    const { inviteUrl, expiresAt } = await invite(brandA.brandId, 'Owner@Example.com', 'owner');
    expect(inviteUrl).toMatch(/\/portal\/invite#token=[A-Za-z0-9_-]{43}$/);
    expect(new Date(expiresAt).getTime() - platform.clock.now().getTime()).toBe(72 * 3600_000);
    const browser = new PortalBrowser();
    await browser.session();
    const accepted = await browser.request('POST', '/invites/accept', {
      token: tokenOf(inviteUrl),
      password: PASSWORD,
    });
    expect(accepted.status).toBe(200);
    const cookie = accepted.headers.getSetCookie().find((c) => c.startsWith('pts_portal_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\/portal/);
    expect(cookie).not.toMatch(/Secure/);
    const session = await browser.session();
    expect(session.user.email).toBe('owner@example.com');
    expect(session.brands).toEqual([{ brandId: brandA.brandId, brandName: 'Brand A', role: 'owner' }]);

    const again = new PortalBrowser();
    await again.session();
    const reused = await again.request('POST', '/invites/accept', {
      token: tokenOf(inviteUrl),
      password: 'another password 1',
    });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toMatch(/invalid, expired or already used/);
    expect((await again.signIn('owner@example.com', 'another password 1')).status).toBe(401);
  });

  it('cookies are Secure behind https', async () => {
    const { inviteUrl } = await invite(brandA.brandId, 'secure@example.com', 'viewer');
    const browser = new PortalBrowser();
    await browser.session();
    const response = await fetch(`${platform.url}/portal/api/invites/accept`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-forwarded-proto': 'https',
        cookie: `pts_portal_csrf=${browser.csrf}`,
        'x-csrf-token': browser.csrf,
      },
      body: JSON.stringify({ token: tokenOf(inviteUrl), password: PASSWORD }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.getSetCookie().find((c) => c.startsWith('pts_portal_session='))).toMatch(/; Secure/);
  });

  it('an expired invite is refused', async () => {
    const { inviteUrl } = await invite(brandA.brandId, 'late@example.com', 'viewer');
    platform.clock.advance(72 * 3600_000 + 1000);
    try {
      const browser = new PortalBrowser();
      await browser.session();
      const answer = await browser.request('POST', '/invites/accept', {
        token: tokenOf(inviteUrl),
        password: PASSWORD,
      });
      expect(answer.status).toBe(400);
    } finally {
      platform.clock.advance(-(72 * 3600_000 + 1000));
    }
  });

  it('sign-in answers the same for an unknown e-mail and a wrong password', async () => {
    await member(brandA.brandId, 'known@example.com', 'viewer');
    const browser = new PortalBrowser('10.0.1.1');
    const unknown = await browser.signIn('nobody@example.com', 'whatever password');
    const wrong = await browser.signIn('known@example.com', 'whatever password');
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
    // Reset requests say nothing about the account either.
    await browser.session();
    const resetUnknown = await browser.request('POST', '/password-reset', { email: 'nobody@example.com' });
    const resetKnown = await browser.request('POST', '/password-reset', { email: 'known@example.com' });
    expect(resetUnknown.status).toBe(202);
    expect(resetKnown).toMatchObject({ status: 202, body: resetUnknown.body });
  });

  it('10 wrong passwords are throttled: from the 6th the right one is refused too, per account and per IP', async () => {
    await member(brandA.brandId, 'target@example.com', 'viewer');
    const attacker = new PortalBrowser('10.0.2.1');
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++)
      statuses.push((await attacker.signIn('target@example.com', `wrong password ${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
    // The account is locked for everyone (another IP, the right password)…
    const owner = new PortalBrowser('10.0.2.2');
    const locked = await owner.signIn('target@example.com');
    expect(locked.status).toBe(429);
    expect(locked.body.retryAfter).toBeGreaterThan(0);
    // … and one IP cannot spray many accounts.
    const sprayer = new PortalBrowser('10.0.3.1');
    const spray: number[] = [];
    for (let i = 0; i < 31; i++) spray.push((await sprayer.signIn(`spray${i}@example.com`, 'guess password')).status);
    expect(spray.slice(0, 30).every((status) => status === 401)).toBe(true);
    expect(spray[30]).toBe(429);
  });

  it('a password reset link signs in once and ends the other sessions', async () => {
    const first = await member(brandA.brandId, 'forgetful@example.com', 'viewer');
    const lines: string[] = [];
    const mailer = createPortalMailer({
      from: 'x',
      logger: pino({ level: 'info' }, { write: (l: string) => lines.push(l) }),
    });
    const { requestPasswordReset } = await import('./portal-team.service.ts');
    await requestPasswordReset(
      { db: platform.deps.db, clock: platform.clock, mailer },
      'forgetful@example.com',
      platform.url,
    );
    const link = JSON.parse(lines.at(-1)!).link as string;
    expect(link).toMatch(/\/portal\/reset#token=/);
    const browser = new PortalBrowser();
    await browser.session();
    const done = await browser.request('POST', '/password-reset/complete', {
      token: tokenOf(link),
      password: 'a brand new password',
    });
    expect(done.status).toBe(200);
    expect((await browser.session()).signedIn).toBe(true);
    expect((await first.session()).signedIn).toBe(false);
    const reused = await browser.request('POST', '/password-reset/complete', {
      token: tokenOf(link),
      password: 'x'.repeat(12),
    });
    expect(reused.status).toBe(400);
  });
});

describe('sessions', () => {
  it('sign-out ends the session on the server (the old cookie no longer works)', async () => {
    const browser = await member(brandA.brandId, 'leaver@example.com', 'viewer');
    const stolen = new Map(browser.cookies);
    expect((await browser.request('GET', `/brands/${brandA.brandId}/rules`)).status).toBe(200);
    expect((await browser.request('POST', '/sign-out')).status).toBe(200);
    const replay = new PortalBrowser();
    replay.cookies = stolen;
    expect((await replay.request('GET', `/brands/${brandA.brandId}/rules`)).status).toBe(401);
  });

  it('a password change ends every other session; the idle limit ends a session too', async () => {
    const laptop = await member(brandA.brandId, 'changer@example.com', 'viewer');
    const phone = new PortalBrowser();
    expect((await phone.signIn('changer@example.com')).status).toBe(200);
    const changed = await laptop.request('POST', '/password', {
      currentPassword: PASSWORD,
      newPassword: 'my second password',
    });
    expect(changed.status).toBe(200);
    expect((await laptop.session()).signedIn).toBe(true);
    expect((await phone.session()).signedIn).toBe(false);
    const wrongCurrent = await laptop.request('POST', '/password', {
      currentPassword: 'nope',
      newPassword: 'x'.repeat(12),
    });
    expect(wrongCurrent).toMatchObject({ status: 400, body: { details: { field: 'currentPassword' } } });

    platform.clock.advance(PORTAL_SESSION_IDLE_MS + 1000);
    try {
      expect((await laptop.session()).signedIn).toBe(false);
    } finally {
      platform.clock.advance(-(PORTAL_SESSION_IDLE_MS + 1000));
    }
  });
});

describe('roles, CSRF and brand isolation', () => {
  let ownerA: PortalBrowser;
  let viewerA: PortalBrowser;
  let ownerB: PortalBrowser;

  beforeAll(async () => {
    ownerA = await member(brandA.brandId, 'alice@a.example.com', 'owner');
    viewerA = await member(brandA.brandId, 'victor@a.example.com', 'viewer');
    ownerB = await member(brandB.brandId, 'bob@b.example.com', 'owner');
  });

  const rule = { rewardAmount: 40, cooldownHours: 0, maxClaims: -1 };

  it('an admin or owner sets a rule through the brands service, audited under their e-mail', async () => {
    const answer = await ownerA.request('PUT', `/brands/${brandA.brandId}/rules/portal_rule`, rule);
    expect(answer.status).toBe(200);
    expect(answer.body.rule).toMatchObject({ eventType: 'portal_rule', rewardAmount: 40, maxClaims: -1, active: true });
    const audit = await viewerA.request('GET', `/brands/${brandA.brandId}/audit`);
    expect(audit.body.entries[0]).toMatchObject({ actor: 'portal:alice@a.example.com', action: 'rule.set' });
    // Bad input says what to fix.
    const bad = await ownerA.request('PUT', `/brands/${brandA.brandId}/rules/portal_rule`, { rewardAmount: -5 });
    expect(bad.status).toBe(400);
    expect(bad.body.details.errors.join()).toMatch(/rewardAmount/);
  });

  it('a viewer reads but every change is refused with 403', async () => {
    expect((await viewerA.request('GET', `/brands/${brandA.brandId}/rules`)).status).toBe(200);
    expect((await viewerA.request('GET', `/brands/${brandA.brandId}/team`)).status).toBe(200);
    const change = await viewerA.request('PUT', `/brands/${brandA.brandId}/rules/portal_rule`, {
      ...rule,
      rewardAmount: 1,
    });
    expect(change.status).toBe(403);
    expect(
      (await viewerA.request('POST', `/brands/${brandA.brandId}/invites`, { email: 'x@example.com', role: 'owner' }))
        .status,
    ).toBe(403);
    const team = await ownerA.request('GET', `/brands/${brandA.brandId}/team`);
    const self = team.body.members.find((m: { email: string }) => m.email === 'victor@a.example.com');
    expect(
      (await viewerA.request('PATCH', `/brands/${brandA.brandId}/members/${self.userId}`, { role: 'owner' })).status,
    ).toBe(403);
    const rules = await viewerA.request('GET', `/brands/${brandA.brandId}/rules`);
    expect(rules.body.rules.find((r: { eventType: string }) => r.eventType === 'portal_rule').rewardAmount).toBe(40);
  });

  it("a viewer's malformed change is answered 403 before any 400, on every write route of the team and integrations tables", async () => {
    // Walked from the route tables themselves, so a write route added later is covered without editing this list.
    const writes = [
      ...portalRoutes({} as PortalRoutesDeps),
      ...portalIntegrationRoutes({} as PortalIntegrationDeps),
    ].filter((r) => r.method !== 'get' && r.path.startsWith('/brands/:brandId/'));
    // Leaving is the one change a viewer may make (it has neither body nor other params to malform).
    const anyRole = new Set(['/brands/:brandId/leave']);
    const walked = writes.filter((r) => !anyRole.has(r.path));
    expect(walked.length).toBeGreaterThanOrEqual(18);
    for (const route of walked) {
      // Every other path parameter malformed, and a body that no schema of these routes accepts.
      const path = route.path.replace(':brandId', brandA.brandId).replace(/:\w+/g, encodeURIComponent('not valid!'));
      const answer = await viewerA.request(route.method.toUpperCase(), path, 'not json');
      expect(answer.status, `${route.method} ${route.path}: ${JSON.stringify(answer.body)}`).toBe(403);
      expect(answer.body.error).toMatch(/Your role in this brand \(viewer\) cannot do this/);
    }
    // The owner sending a malformed change still learns what to fix.
    const bad = await ownerA.request('PUT', `/brands/${brandA.brandId}/webhook`, { url: 'not a url' });
    expect(bad.status).toBe(400);
  });

  it('a request without the CSRF token (or with a wrong one) changes nothing', async () => {
    const missing = await ownerA.request(
      'PUT',
      `/brands/${brandA.brandId}/rules/portal_rule`,
      { ...rule, rewardAmount: 7 },
      { csrf: false },
    );
    expect(missing.status).toBe(403);
    expect(missing.body.error).toMatch(/CSRF/);
    const forged = new PortalBrowser();
    forged.cookies = new Map(ownerA.cookies);
    forged.csrf = 'A'.repeat(43);
    expect(
      (await forged.request('PUT', `/brands/${brandA.brandId}/rules/portal_rule`, { ...rule, rewardAmount: 7 })).status,
    ).toBe(403);
    expect((await forged.request('POST', '/sign-out')).status).toBe(403);
    const rules = await ownerA.request('GET', `/brands/${brandA.brandId}/rules`);
    expect(rules.body.rules.find((r: { eventType: string }) => r.eventType === 'portal_rule').rewardAmount).toBe(40);
    expect((await ownerA.session()).signedIn).toBe(true);
  });

  it("brand A's owner gets 404 for brand B on every portal brand route, and changes nothing there", async () => {
    const teamB = await ownerB.request('GET', `/brands/${brandB.brandId}/team`);
    const bobId = teamB.body.members[0].userId;
    const b = brandB.brandId;
    const attempts: [string, string, unknown?][] = [
      ['GET', `/brands/${b}`],
      ['GET', `/brands/${b}/rules`],
      ['PUT', `/brands/${b}/rules/account_creation`, { rewardAmount: 1 }],
      ['GET', `/brands/${b}/team`],
      ['POST', `/brands/${b}/invites`, { email: 'mole@a.example.com', role: 'owner' }],
      ['PATCH', `/brands/${b}/members/${bobId}`, { role: 'viewer' }],
      ['GET', `/brands/${b}/audit`],
      ['GET', `/brands/${b}/dashboard`],
      ['POST', `/brands/${b}/rules/account_creation/archive`],
      ['POST', `/brands/${b}/rules/account_creation/restore`],
      ['DELETE', `/brands/${b}/members/${bobId}`],
      ['POST', `/brands/${b}/members/${bobId}/sessions/end`],
      ['POST', `/brands/${b}/leave`],
      ['DELETE', `/brands/${b}/invites/${encodeURIComponent('mole@a.example.com')}`],
      // The Members page's routes (issue 33 §12): the list, its search and both CSV exports included.
      ['GET', `/brands/${b}/member-list?sort=earned&order=desc`],
      ['GET', `/brands/${b}/member-list.csv?sort=balance`],
      ['GET', `/brands/${b}/events.csv?from=2020-01-01T00:00:00Z&to=2040-01-01T00:00:00Z`],
      ['GET', `/brands/${b}/loyalty-members?q=customer`],
      ['GET', `/brands/${b}/loyalty-members/${encodeURIComponent('mole@b.example.com')}`],
      [
        'POST',
        `/brands/${b}/loyalty-members/${encodeURIComponent('mole@b.example.com')}/awards`,
        { amount: 1, reason: 'mole' },
      ],
      [
        'POST',
        `/brands/${b}/loyalty-members/${encodeURIComponent('mole@b.example.com')}/deductions`,
        { amount: 1, reason: 'mole' },
      ],
      ['POST', `/brands/${b}/loyalty-members/${encodeURIComponent('mole@b.example.com')}/block`, { reason: 'mole' }],
      ['DELETE', `/brands/${b}/loyalty-members/${encodeURIComponent('mole@b.example.com')}/block`],
    ];
    for (const [method, path, body] of attempts) {
      const answer = await ownerA.request(method, path, body);
      expect([403, 404], `${method} ${path}`).toContain(answer.status);
    }
    // The routes cover every brand route of this table in the OpenAPI document (the other pages' tables
    // have their own isolation tests).
    const table = new Set(
      [
        ...portalRoutes({} as PortalRoutesDeps),
        ...portalDashboardRoutes({} as PortalDashboardDeps),
        ...portalMemberRoutes({} as PortalMemberRoutesDeps),
      ].map((r) => `/portal/api${r.path.replace(/:(\w+)/g, '{$1}')}`),
    );
    const documented = Object.keys((await platform.get('/openapi.json')).body.paths).filter(
      (p) => p.startsWith('/portal/api/brands/') && table.has(p),
    );
    expect(documented.length).toBe(
      new Set(
        attempts.map(([, path]) =>
          path
            .replace(b, '{brandId}')
            .replace(bobId, '{userId}')
            .replace('account_creation', '{eventType}')
            .replace(encodeURIComponent('mole@a.example.com'), '{email}')
            .replace(encodeURIComponent('mole@b.example.com'), '{userKey}')
            .replace(/\?.*$/, ''),
        ),
      ).size,
    );
    const after = await ownerB.request('GET', `/brands/${b}/team`);
    expect(after.body.members).toEqual(teamB.body.members);
    expect(after.body.pendingInvites).toEqual([]);
    // And an owner cannot reach into another brand through a member id of theirs.
    const aliceTeam = await ownerA.request('GET', `/brands/${brandA.brandId}/team`);
    expect(
      (await ownerA.request('PATCH', `/brands/${brandA.brandId}/members/${bobId}`, { role: 'viewer' })).status,
    ).toBe(404);
    expect(aliceTeam.status).toBe(200);
  });

  it('an owner invites and changes roles; the last owner cannot step down', async () => {
    const sent = await ownerA.request('POST', `/brands/${brandA.brandId}/invites`, {
      email: 'new@a.example.com',
      role: 'admin',
    });
    expect(sent.status).toBe(201);
    expect(sent.body.inviteUrl).toMatch(/#token=/);
    const team = await ownerA.request('GET', `/brands/${brandA.brandId}/team`);
    expect(team.body.pendingInvites).toContainEqual(
      expect.objectContaining({ email: 'new@a.example.com', role: 'admin' }),
    );
    const victor = team.body.members.find((m: { email: string }) => m.email === 'victor@a.example.com');
    const promoted = await ownerA.request('PATCH', `/brands/${brandA.brandId}/members/${victor.userId}`, {
      role: 'admin',
    });
    expect(promoted.status).toBe(200);
    expect((await viewerA.request('PUT', `/brands/${brandA.brandId}/rules/portal_rule`, rule)).status).toBe(200);
    await ownerA.request('PATCH', `/brands/${brandA.brandId}/members/${victor.userId}`, { role: 'viewer' });
    const owners = team.body.members.filter((m: { role: string }) => m.role === 'owner');
    for (const owner of owners.slice(1)) {
      await ownerA.request('PATCH', `/brands/${brandA.brandId}/members/${owner.userId}`, { role: 'admin' });
    }
    const self = owners[0];
    const stepDown = await ownerA.request('PATCH', `/brands/${brandA.brandId}/members/${self.userId}`, {
      role: 'admin',
    });
    expect(stepDown.status).toBe(409);
    // Team changes are in the brand's audit log with who made them.
    const audit = await ownerA.request('GET', `/brands/${brandA.brandId}/audit`);
    const actions = audit.body.entries.map((e: { actor: string; action: string }) => `${e.actor} ${e.action}`);
    expect(actions).toContain('portal:alice@a.example.com portal.invite');
    expect(actions).toContain('portal:alice@a.example.com portal.role_change');
    expect(actions).toContain('portal:victor@a.example.com portal.invite_accepted');
  });
});

describe('pts portal invite and e-mailed links', () => {
  it('the CLI prints {"email","brandId","role","inviteUrl","expiresAt"} and the link works', async () => {
    let out = '';
    const code = await runCli(
      ['portal', 'invite', '--brand', brandB.brandId, '--email', 'cli@example.com', '--role', 'admin', '--json'],
      {
        env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
        stdout: { write: (text: string) => (out += text) },
        stderr: { write: () => true },
      },
    );
    expect(code).toBe(0);
    const printed = JSON.parse(out);
    expect(Object.keys(printed).sort()).toEqual(['brandId', 'email', 'expiresAt', 'inviteUrl', 'role']);
    expect(printed).toMatchObject({ email: 'cli@example.com', brandId: brandB.brandId, role: 'admin' });
    const browser = new PortalBrowser();
    await browser.session();
    expect(
      (await browser.request('POST', '/invites/accept', { token: tokenOf(printed.inviteUrl), password: PASSWORD }))
        .status,
    ).toBe(200);
    expect((await browser.session()).brands[0].role).toBe('admin');
    let usage = '';
    const bad = await runCli(
      ['portal', 'invite', '--brand', brandB.brandId, '--email', 'x@example.com', '--role', 'boss'],
      {
        env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
        stdout: { write: () => true },
        stderr: { write: (text: string) => (usage += text) },
      },
    );
    expect(bad).toBe(2);
    expect(usage).toMatch(/--role must be one of owner, admin, viewer/);
  });

  it('with PTS_SMTP_URL the invite is e-mailed through SMTP', async () => {
    const smtp = await startSmtpServer();
    try {
      const mailer = createPortalMailer({
        smtpUrl: `smtp://127.0.0.1:${smtp.port}`,
        from: 'portal@pts.example',
        logger: pino({ level: 'silent' }),
      });
      expect(mailer.kind).toBe('mail');
      const sent = await inviteMember(
        { db: platform.deps.db, clock: platform.clock, mailer },
        {
          brandId: brandA.brandId,
          email: 'mailed@example.com',
          role: 'viewer',
          invitedBy: 'admin',
          baseUrl: platform.url,
        },
      );
      expect(smtp.messages).toHaveLength(1);
      expect(smtp.messages[0]!.to).toEqual(['<mailed@example.com>']);
      expect(smtp.messages[0]!.data.replace(/=\r\n/g, '').replace(/=3D/g, '=')).toContain(sent.inviteUrl);
    } finally {
      smtp.server.close();
    }
  });
});

/** Just enough SMTP (RFC 5321) for nodemailer to deliver one message; records envelope and data. */
async function startSmtpServer() {
  const messages: { from: string; to: string[]; data: string }[] = [];
  const server: Server = createServer((socket: Socket) => {
    let buffer = '';
    let inData = false;
    let current = { from: '', to: [] as string[], data: '' };
    socket.write('220 localhost test SMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          current.data = buffer.slice(0, end);
          buffer = buffer.slice(end + 5);
          inData = false;
          messages.push(current);
          current = { from: '', to: [], data: '' };
          socket.write('250 OK queued\r\n');
          continue;
        }
        const end = buffer.indexOf('\r\n');
        if (end < 0) return;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 localhost\r\n');
        else if (verb === 'MAIL') {
          current.from = line.slice(10);
          socket.write('250 OK\r\n');
        } else if (verb === 'RCPT') {
          current.to.push(line.slice(8));
          socket.write('250 OK\r\n');
        } else if (verb === 'DATA') {
          inData = true;
          socket.write('354 End data with <CR><LF>.<CR><LF>\r\n');
        } else if (verb === 'QUIT') {
          socket.end('221 Bye\r\n');
        } else socket.write('250 OK\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, messages };
}
