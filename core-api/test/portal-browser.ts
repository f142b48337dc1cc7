import type { TestPlatform } from './platform.ts';

/** A portal user's browser for API tests: keeps the cookies core-api sets and the session's CSRF token. */
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
    return { status: response.status, body: parsed };
  }

  async session() {
    const answer = await this.request('GET', '/session');
    this.csrf = answer.body.csrfToken;
    return answer.body;
  }
}

/** Invites `email` into the brand with `role` (admin token), accepts the invite, and returns the signed-in browser. */
export async function portalMember(
  platform: TestPlatform,
  brandId: string,
  email: string,
  role: 'owner' | 'admin' | 'viewer',
  password = 'portal password 1',
): Promise<PortalBrowser> {
  const invite = await platform.post(
    '/admin/portal/invites',
    { brandId, email, role },
    { authorization: `Bearer ${platform.deps.adminToken}` },
  );
  if (invite.status !== 201) throw new Error(`invite failed: ${JSON.stringify(invite.body)}`);
  const browser = new PortalBrowser(platform);
  await browser.session();
  const token = new URL(invite.body.inviteUrl).hash.replace('#token=', '');
  const accepted = await browser.request('POST', '/invites/accept', { token, password });
  if (accepted.status !== 200) throw new Error(`accept failed: ${JSON.stringify(accepted.body)}`);
  await browser.session();
  return browser;
}
