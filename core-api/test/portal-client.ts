import { expect } from 'vitest';
import type { TestPlatform } from './platform.ts';

// A portal user's browser for API tests: keeps the cookies core-api sets and the CSRF token of the session
// answer, and joins a brand through a real invite (`POST /admin/portal/invites`).

export const PORTAL_TEST_PASSWORD = 'correct horse battery';

export class PortalClient {
  cookies = new Map<string, string>();
  csrf = '';
  constructor(readonly platform: TestPlatform) {}

  async request(method: string, path: string, body?: unknown) {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET') headers['x-csrf-token'] = this.csrf;
    const response = await fetch(`${this.platform.url}/portal/api${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [name, value = ''] = cookie.split(';')[0]!.split('=');
      if (/Max-Age=0/.test(cookie)) this.cookies.delete(name!);
      else this.cookies.set(name!, value);
    }
    const text = await response.text();
    // biome-ignore lint/suspicious/noExplicitAny: tests read the answer's fields
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as any };
  }

  async session() {
    const answer = await this.request('GET', '/session');
    this.csrf = answer.body.csrfToken;
    return answer.body;
  }
}

/** A person invited into the brand with `role` who set a password: signed in. */
export async function portalMember(
  platform: TestPlatform,
  brandId: string,
  email: string,
  role: 'owner' | 'admin' | 'viewer',
): Promise<PortalClient> {
  const invite = await platform.post(
    '/admin/portal/invites',
    { brandId, email, role },
    { authorization: `Bearer ${platform.deps.adminToken}` },
  );
  expect(invite.status, JSON.stringify(invite.body)).toBe(201);
  const token = new URL(invite.body.inviteUrl).hash.replace('#token=', '');
  const client = new PortalClient(platform);
  await client.session();
  const accepted = await client.request('POST', '/invites/accept', { token, password: PORTAL_TEST_PASSWORD });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  await client.session();
  return client;
}
