import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { runCli } from '../../cli/run-cli.ts';

// The README's first user (issue 33 §3): `npm start` invites demo@localhost, and every place that reads an
// e-mail address takes it by the one rule (shared/src/schemas/email.ts): the CLI, invites, sign-in, reset.

const PASSWORD = 'demo password 1';
let platform: TestPlatform;
let brand: { brandId: string };

/** Keeps the cookies core-api sets and the session's CSRF token, as the portal's pages do. */
function portalBrowser() {
  const cookies = new Map<string, string>();
  let csrf = '';
  const request = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = {};
    if (cookies.size > 0) headers.cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET') headers['x-csrf-token'] = csrf;
    const response = await fetch(`${platform.url}/portal/api${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [name, value = ''] = cookie.split(';')[0]!.split('=');
      if (/Max-Age=0/.test(cookie)) cookies.delete(name!);
      else cookies.set(name!, value);
    }
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const session = async () => {
    const answer = await request('GET', '/session');
    csrf = answer.body.csrfToken;
    return answer.body;
  };
  return { request, session };
}

async function pts(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({ name: 'Demo', domain: 'demo.example.com' });
});

afterAll(async () => {
  await platform?.stop();
});

describe('demo@localhost, the address npm start invites', () => {
  it('is invited by the CLI, signs in again after signing out, and may ask for a reset link', async () => {
    const invited = await pts([
      'portal',
      'invite',
      '--brand',
      brand.brandId,
      '--email',
      'demo@localhost',
      '--role',
      'owner',
      '--json',
    ]);
    expect(invited, invited.stderr).toMatchObject({ code: 0, stderr: '' });
    const { inviteUrl, email } = JSON.parse(invited.stdout);
    expect(email).toBe('demo@localhost');

    const browser = portalBrowser();
    await browser.session();
    const token = new URL(inviteUrl).hash.replace('#token=', '');
    expect((await browser.request('POST', '/invites/accept', { token, password: PASSWORD })).status).toBe(200);
    expect((await browser.request('POST', '/sign-out')).status).toBe(200);
    expect((await browser.session()).signedIn).toBe(false);

    const signIn = await browser.request('POST', '/sign-in', { email: 'Demo@LocalHost', password: PASSWORD });
    expect(signIn.status, JSON.stringify(signIn.body)).toBe(200);
    const session = await browser.session();
    expect(session).toMatchObject({ signedIn: true, user: { email: 'demo@localhost' } });
    expect(session.brands).toEqual([expect.objectContaining({ brandId: brand.brandId, role: 'owner' })]);

    const stranger = portalBrowser();
    await stranger.session();
    const reset = await stranger.request('POST', '/password-reset', { email: 'demo@localhost' });
    expect(reset.status, JSON.stringify(reset.body)).toBe(202);
  });

  it('pts user token takes demo@localhost; an address with no domain is a usage error before any request', async () => {
    const issued = await pts(['user', 'token', '--email', 'demo@localhost', '--json']);
    expect(issued, issued.stderr).toMatchObject({ code: 0, stderr: '' });

    for (const argv of [
      ['user', 'token', '--email', 'demo@'],
      ['portal', 'invite', '--brand', brand.brandId, '--email', 'no-at-sign', '--role', 'viewer'],
      ['portal', 'invite', '--operator', '--email', 'two@at@signs'],
    ]) {
      const refused = await pts(argv);
      expect(refused.code, argv.join(' ')).toBe(2);
      expect(refused.stderr).toMatch(/--email must be an e-mail address such as name@example.com/);
    }
  });
});
