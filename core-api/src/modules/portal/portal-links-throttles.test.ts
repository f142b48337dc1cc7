import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { PortalBrowser, portalMember } from '../../../test/portal-browser.ts';
import { postWithHeaders } from '../../../test/raw-post.ts';
import {
  RESET_REQUESTS_PER_ACCOUNT,
  RESET_REQUESTS_PER_IP,
  SIGN_IN_FAILURES_PER_ACCOUNT,
  SIGN_IN_FAILURES_PER_IP,
} from './portal.routes.ts';

// Issue 33 §5–§7 through the real routes (PGlite and PostgreSQL): links come from configuration, never from the
// request's headers; every limit is taken before the password is hashed (parallel requests cannot slip
// through); reset requests answer before any lookup, are limited, and a newer link voids the older ones.

let platform: TestPlatform;
let brand: { brandId: string };
let owner: PortalBrowser;
const PASSWORD = 'correct horse battery';
/** What the platform logged: with no mail server, each invite or reset link is a log line (`to`, `link`). */
const logLines: string[] = [];

interface SentLink {
  to: string;
  link: string;
}
const sentLinks = (to: string, page: 'reset' | 'invite' = 'reset'): SentLink[] =>
  logLines
    .map((line) => JSON.parse(line) as { msg?: string; to?: string; link?: string })
    .filter((entry) => entry.msg?.startsWith('portal link') && entry.to === to)
    .filter((entry) => entry.link?.includes(`/portal/${page}#token=`))
    .map((entry) => ({ to: entry.to!, link: entry.link! }));
const tokenOf = (url: string) => new URL(url).hash.replace('#token=', '');

const hostile = {
  host: 'evil.example',
  'x-forwarded-host': 'evil-proxy.example',
  'x-forwarded-proto': 'https',
};

/** A signed-out browser at `ip`, with its CSRF token. */
async function visitor(ip: string) {
  const browser = new PortalBrowser(platform, ip);
  await browser.session();
  return browser;
}

beforeAll(async () => {
  platform = await startTestPlatform(
    { PTS_TRUST_PROXY: 'true' },
    { logger: pino({ level: 'info' }, { write: (line: string) => logLines.push(line) }) },
  );
  brand = await platform.createBrand({ name: 'Links', domain: 'links.example.com' });
  owner = await portalMember(platform, brand.brandId, 'owner@links.example.com', 'owner');
});

afterAll(async () => {
  await platform?.stop();
});

describe('links come from configuration, never from request headers', () => {
  it('a reset asked for with a hostile Host header mails a link to the listening address', async () => {
    await portalMember(platform, brand.brandId, 'victim@links.example.com', 'viewer');
    const browser = await visitor('10.5.0.1');
    const answer = await postWithHeaders(
      platform.url,
      '/portal/api/password-reset',
      { email: 'victim@links.example.com' },
      {
        ...hostile,
        'x-forwarded-for': '10.5.0.1',
        cookie: `pts_portal_csrf=${browser.csrf}`,
        'x-csrf-token': browser.csrf,
      },
    );
    expect(answer.status).toBe(202);
    await platform.services.portal.team.settle();
    const [mailed] = sentLinks('victim@links.example.com');
    expect(mailed!.link.startsWith(`${platform.url}/portal/reset#token=`)).toBe(true);
    expect(mailed!.link).not.toMatch(/evil/);
  });

  it("an owner's invite sent with a hostile Host header links to the listening address", async () => {
    const cookie = [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const answer = await postWithHeaders(
      platform.url,
      `/portal/api/brands/${brand.brandId}/invites`,
      { email: 'invitee@links.example.com', role: 'viewer' },
      { ...hostile, 'x-forwarded-for': owner.ip, cookie, 'x-csrf-token': owner.csrf },
    );
    expect(answer.status).toBe(201);
    const { inviteUrl } = JSON.parse(answer.body) as { inviteUrl: string };
    expect(inviteUrl.startsWith(`${platform.url}/portal/invite#token=`)).toBe(true);
    expect(sentLinks('invitee@links.example.com', 'invite').at(-1)!.link).toBe(inviteUrl);
  });
});

describe('throttles are taken before the password is hashed', () => {
  it(`20 parallel sign-ins, 19 wrong and the right one: at most ${SIGN_IN_FAILURES_PER_ACCOUNT} checked`, async () => {
    await portalMember(platform, brand.brandId, 'parallel@links.example.com', 'viewer');
    const browsers = await Promise.all(Array.from({ length: 20 }, (_, i) => visitor(`10.6.0.${i + 1}`)));
    const answers = await Promise.all(
      browsers.map((browser, i) =>
        browser.request('POST', '/sign-in', {
          email: 'parallel@links.example.com',
          password: i === 13 ? PASSWORD : `wrong password ${i}`,
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    // 401 and 200 are the answers of a checked password; 429 was refused before any hashing.
    const checked = statuses.filter((status) => status !== 429);
    expect(checked.length).toBeLessThanOrEqual(SIGN_IN_FAILURES_PER_ACCOUNT);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(
      20 - SIGN_IN_FAILURES_PER_ACCOUNT,
    );
    // Over the limit, the right password is refused too.
    const late = await (await visitor('10.6.1.1')).request('POST', '/sign-in', {
      email: 'parallel@links.example.com',
      password: PASSWORD,
    });
    expect(late.status).toBe(429);
    expect(late.body.retryAfter).toBeGreaterThan(0);
  });

  it(`60 parallel sign-ins from one address: at most ${SIGN_IN_FAILURES_PER_IP} checked`, async () => {
    const browser = await visitor('10.7.0.1');
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        browser.request('POST', '/sign-in', { email: `spray${i}@links.example.com`, password: 'guess password 1' }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(SIGN_IN_FAILURES_PER_IP);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(60 - SIGN_IN_FAILURES_PER_IP);
  });

  it('12 wrong current passwords on POST /password: 429 after the limit, in a row or in parallel', async () => {
    const changer = await portalMember(platform, brand.brandId, 'changer@links.example.com', 'viewer');
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const answer = await changer.request('POST', '/password', {
        currentPassword: `wrong current ${i}`,
        newPassword: 'a new password 12',
      });
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([...Array(5).fill(400), ...Array(7).fill(429)]);
    // Locked: the right current password is refused too, and the password did not change.
    const right = await changer.request('POST', '/password', {
      currentPassword: PASSWORD,
      newPassword: 'x'.repeat(12),
    });
    expect(right.status).toBe(429);

    const parallel = await portalMember(platform, brand.brandId, 'parallel-changer@links.example.com', 'viewer');
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        parallel.request('POST', '/password', { currentPassword: `wrong ${i}`, newPassword: 'a new password 12' }),
      ),
    );
    const checked = answers.filter((answer) => answer.status === 400);
    expect(checked.length).toBeLessThanOrEqual(SIGN_IN_FAILURES_PER_ACCOUNT);
    expect(answers.filter((answer) => answer.status === 429).length).toBeGreaterThanOrEqual(7);
  });
});

describe('password resets', () => {
  it('the answer never waits for the lookup or the mail: known and unknown e-mails run the same path', async () => {
    await portalMember(platform, brand.brandId, 'known@links.example.com', 'viewer');
    const mailer = platform.services.portalMailer;
    const send = mailer.send;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let mailsStarted = 0;
    // The mail server hangs: an answer that waited for the mail of a known e-mail would hang with it.
    mailer.send = async (message) => {
      mailsStarted += 1;
      await held;
      return send.call(mailer, message);
    };
    try {
      const browser = await visitor('10.8.0.1');
      const signal = AbortSignal.timeout(5000);
      const ask = (email: string) =>
        fetch(`${platform.url}/portal/api/password-reset`, {
          method: 'POST',
          signal,
          headers: {
            'content-type': 'application/json',
            'x-forwarded-for': browser.ip,
            cookie: `pts_portal_csrf=${browser.csrf}`,
            'x-csrf-token': browser.csrf,
          },
          body: JSON.stringify({ email }),
        });
      const known = await ask('known@links.example.com');
      const unknown = await ask('unknown@links.example.com');
      expect([known.status, unknown.status]).toEqual([202, 202]);
      expect(await known.text()).toBe(await unknown.text());
      await expect.poll(() => mailsStarted).toBe(1);
    } finally {
      release();
      await platform.services.portal.team.settle();
      mailer.send = send;
    }
    expect(sentLinks('known@links.example.com')).toHaveLength(1);
    expect(sentLinks('unknown@links.example.com')).toHaveLength(0);
  });

  it(`20 requests for one e-mail (in parallel, from many addresses) send at most ${RESET_REQUESTS_PER_ACCOUNT} links`, async () => {
    await portalMember(platform, brand.brandId, 'flooded@links.example.com', 'viewer');
    const browsers = await Promise.all(Array.from({ length: 20 }, (_, i) => visitor(`10.9.0.${i + 1}`)));
    const answers = await Promise.all(
      browsers.map((browser) => browser.request('POST', '/password-reset', { email: 'flooded@links.example.com' })),
    );
    await platform.services.portal.team.settle();
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 202)).toHaveLength(RESET_REQUESTS_PER_ACCOUNT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20 - RESET_REQUESTS_PER_ACCOUNT);
    expect(answers.find((answer) => answer.status === 429)!.body.error).toMatch(/Too many password reset requests/);
    expect(sentLinks('flooded@links.example.com')).toHaveLength(RESET_REQUESTS_PER_ACCOUNT);
    // An unknown e-mail is limited the same way (the 429 says nothing about the account).
    const unknown: number[] = [];
    for (const browser of browsers.slice(0, 4)) {
      unknown.push((await browser.request('POST', '/password-reset', { email: 'ghost@links.example.com' })).status);
    }
    expect(unknown).toEqual([202, 202, 202, 429]);
  });

  it(`one address asking for many e-mails gets ${RESET_REQUESTS_PER_IP} answers, then 429`, async () => {
    const browser = await visitor('10.10.0.1');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        browser.request('POST', '/password-reset', { email: `many${i}@links.example.com` }),
      ),
    );
    await platform.services.portal.team.settle();
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(RESET_REQUESTS_PER_IP);
  });

  it('a newer reset link voids the older ones', async () => {
    await portalMember(platform, brand.brandId, 'twice@links.example.com', 'viewer');
    const browser = await visitor('10.11.0.1');
    for (let i = 0; i < 2; i++) {
      expect((await browser.request('POST', '/password-reset', { email: 'twice@links.example.com' })).status).toBe(202);
      await platform.services.portal.team.settle();
    }
    const [older, newer] = sentLinks('twice@links.example.com');
    const oldAnswer = await browser.request('POST', '/password-reset/complete', {
      token: tokenOf(older!.link),
      password: 'from the old link',
    });
    expect(oldAnswer.status).toBe(400);
    expect(oldAnswer.body.error).toMatch(/invalid, expired or already used/);
    const newAnswer = await browser.request('POST', '/password-reset/complete', {
      token: tokenOf(newer!.link),
      password: 'from the new link',
    });
    expect(newAnswer.status).toBe(200);
  });

  it('a password changed on the account page voids the reset links still pending', async () => {
    const person = await portalMember(platform, brand.brandId, 'changed@links.example.com', 'viewer');
    const browser = await visitor('10.12.0.1');
    expect((await browser.request('POST', '/password-reset', { email: 'changed@links.example.com' })).status).toBe(202);
    await platform.services.portal.team.settle();
    const [pending] = sentLinks('changed@links.example.com');
    const changed = await person.request('POST', '/password', {
      currentPassword: PASSWORD,
      newPassword: 'the changed password',
    });
    expect(changed.status).toBe(200);
    const late = await browser.request('POST', '/password-reset/complete', {
      token: tokenOf(pending!.link),
      password: 'from a stale link',
    });
    expect(late.status).toBe(400);
  });
});
