import { tokenHash } from '../src/modules/portal/portal-auth.service.ts';
import type { TestPlatform } from './platform.ts';

/** What a signed-in person's browser does against `/portal/api`: keeps the cookies and the CSRF token. */
export class PortalBrowser {
  cookies = new Map<string, string>();
  csrf = '';
  constructor(
    readonly platform: TestPlatform,
    readonly ip = '10.0.0.1',
  ) {}

  async request(method: string, path: string, body?: unknown, options: { csrf?: boolean } = {}) {
    const headers: Record<string, string> = { 'x-forwarded-for': this.ip };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET' && options.csrf !== false) headers['x-csrf-token'] = this.csrf;
    const response = await fetch(`${this.platform.url}/portal/api${path}`, {
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
    // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
    const parsed: any = text ? JSON.parse(text) : undefined;
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  async session() {
    const answer = await this.request('GET', '/session');
    this.csrf = answer.body.csrfToken;
    return answer.body;
  }
}

/** A person invited into the brand with `role` by the operator, who set a password and is signed in. */
export async function portalMember(
  platform: TestPlatform,
  brandId: string,
  email: string,
  role: 'owner' | 'admin' | 'viewer',
  password = 'correct horse battery',
): Promise<PortalBrowser> {
  const invite = await platform.post(
    '/admin/portal/invites',
    { brandId, email, role },
    { authorization: `Bearer ${platform.deps.adminToken}` },
  );
  if (invite.status !== 201) throw new Error(`invite failed: ${invite.status} ${JSON.stringify(invite.body)}`);
  return acceptInviteUrl(platform, invite.body.inviteUrl, password);
}

/** A platform operator: invited with the admin token (`pts portal invite --operator`), password set, signed in. */
export async function portalOperator(
  platform: TestPlatform,
  email: string,
  password = 'correct horse battery',
): Promise<PortalBrowser> {
  const invite = await platform.post(
    '/admin/portal/operator-invites',
    { email },
    { authorization: `Bearer ${platform.deps.adminToken}` },
  );
  if (invite.status !== 201) throw new Error(`operator invite failed: ${invite.status} ${JSON.stringify(invite.body)}`);
  return acceptInviteUrl(platform, invite.body.inviteUrl, password);
}

/** Opens an invite link in a new browser: sets the password and signs in. */
export async function acceptInviteUrl(
  platform: TestPlatform,
  inviteUrl: string,
  password = 'correct horse battery',
): Promise<PortalBrowser> {
  const token = new URL(inviteUrl).hash.replace('#token=', '');
  const browser = new PortalBrowser(platform);
  await browser.session();
  const accepted = await browser.request('POST', '/invites/accept', { token, password });
  if (accepted.status === 409) {
    // The e-mail already has an account: its owner signs in with their own password, then joins.
    const email = await emailOfInvite(platform, token);
    const signedIn = await browser.request('POST', '/sign-in', { email, password });
    if (signedIn.status !== 200) throw new Error(`sign-in before joining failed: ${signedIn.status}`);
    await browser.session();
    const joined = await browser.request('POST', '/invites/join', { token });
    if (joined.status !== 200) throw new Error(`join failed: ${joined.status} ${JSON.stringify(joined.body)}`);
  } else if (accepted.status !== 200) {
    throw new Error(`accept failed: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  }
  await browser.session();
  return browser;
}

/** The e-mail an invite link is for, read from the database (the test knows who it invited). */
async function emailOfInvite(platform: TestPlatform, token: string): Promise<string> {
  const row = await platform.deps.db
    .selectFrom('portal_links')
    .select('email')
    .where('token_hash', '=', tokenHash(token))
    .executeTakeFirstOrThrow();
  return row.email;
}
