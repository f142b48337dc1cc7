import { type CreatedBrand, createCoreClient, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform, type TestResponse } from '../../test/platform.ts';

// Identical brand-signed requests (same timestamp, same body → same signature), sent as a client that
// retries after a timeout or a user who double-taps would: one effect, the same answer to both.

let platform: TestPlatform;
let brand: CreatedBrand;
let users = 0;

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' });
  brand = await platform.createBrand({
    domain: 'retry.example',
    rules: [
      { eventType: 'purchase', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'daily_checkin', rewardAmount: 3, cooldownHours: 0, maxClaims: -1 },
    ],
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

/** One signed request, frozen: sending it again sends the identical bytes with the identical signature. */
function frozen(
  method: string,
  path: string,
  body?: unknown,
  timestamp = Math.floor(platform.clock.now().getTime() / 1000),
) {
  const raw = body === undefined ? '' : JSON.stringify(body);
  const headers = signRequest({ securityKey: brand.securityKey, method, pathWithQuery: path, body: raw, timestamp });
  return async (): Promise<TestResponse> => {
    const response = await fetch(`${platform.url}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: raw }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };
}

const purchase = (email: string) => ({ brandId: brand.brandId, eventType: 'purchase', userEmail: email });

async function rewardsOf(email: string) {
  return platform.deps.db
    .selectFrom('events')
    .select('id')
    .where('user_email', '=', email)
    .where('status', '=', 'accepted')
    .execute();
}

describe('identical signed requests', () => {
  it('a sequential retry of manual-event gets the first answer back, and one reward', async () => {
    const email = `retry${++users}@example.com`;
    const send = frozen('POST', '/pts-api/manual-event', purchase(email));
    const first = await send();
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const second = await send();
    expect(second.status).toBe(200);
    expect(second.headers.get('x-pts-replayed')).toBe('true');
    expect(first.headers.get('x-pts-replayed')).toBeNull();
    expect(second.body).toEqual(first.body);
    expect(await rewardsOf(email)).toHaveLength(1);
  });

  it('five concurrent copies of one signed event: one reward, five identical answers', async () => {
    const email = `burst${++users}@example.com`;
    const send = frozen('POST', '/pts-api/manual-event', purchase(email));
    const answers = await Promise.all(Array.from({ length: 5 }, () => send()));
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const eventIds = new Set(answers.map((answer) => answer.body.eventId));
    expect(eventIds.size).toBe(1);
    expect(answers.filter((answer) => answer.headers.get('x-pts-replayed') === 'true')).toHaveLength(4);
    expect(await rewardsOf(email)).toHaveLength(1);
  });

  it('a repeated signed check-in (a /services route) answers the first check-in again, counted once', async () => {
    const user = `checkin${++users}@example.com`;
    const send = frozen('POST', '/services/checkin', { brandId: brand.brandId, userIdentifier: user, platform: 'web' });
    const [a, b] = await Promise.all([send(), send()]);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(b.body).toEqual(a.body);
    expect(a.body).toMatchObject({ alreadyClaimed: false, reward: 3 });
    const rows = await platform.deps.db.selectFrom('checkins').selectAll().where('user_key', '=', user).execute();
    expect(rows).toHaveLength(1);
  });

  it('identical signed reads both answer (a read has no effect to repeat)', async () => {
    const path = `/services/streak/status/${brand.brandId}/${encodeURIComponent('reader@example.com')}`;
    const send = frozen('GET', path);
    const [a, b] = await Promise.all([send(), send()]);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(b.status).toBe(200);
    expect(b.headers.get('x-pts-replayed')).toBeNull();
    expect((await send()).status).toBe(200);
  });

  it('a copied signature on another body is still refused as a mismatch, and the original answer is untouched', async () => {
    const email = `victim${++users}@example.com`;
    const timestamp = Math.floor(platform.clock.now().getTime() / 1000);
    const original = purchase(email);
    const raw = JSON.stringify(original);
    const headers = signRequest({
      securityKey: brand.securityKey,
      method: 'POST',
      pathWithQuery: '/pts-api/manual-event',
      body: raw,
      timestamp,
    });
    const first = await frozen('POST', '/pts-api/manual-event', original, timestamp)();
    expect(first.status).toBe(200);
    const forged = await fetch(`${platform.url}/pts-api/manual-event`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(purchase(`attacker${users}@example.com`)),
    });
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { details: { reason: string } }).details.reason).toBe('mismatch');
    const retry = await frozen('POST', '/pts-api/manual-event', original, timestamp)();
    expect(retry.body).toEqual(first.body);
  });

  it('a retry after the window is refused as stale', async () => {
    const email = `late${++users}@example.com`;
    const send = frozen('POST', '/pts-api/manual-event', purchase(email));
    expect((await send()).status).toBe(200);
    platform.clock.advance(10 * 60_000);
    const late = await send();
    expect(late.status).toBe(401);
    expect(late.body.details.reason).toBe('timestamp_out_of_window');
    expect(await rewardsOf(email)).toHaveLength(1);
  });

  it('the typed client resends a change whose answer was lost, and the brand pays once', async () => {
    const email = `lost${++users}@example.com`;
    let calls = 0;
    const signatures: string[] = [];
    const core = createCoreClient({
      baseUrl: platform.url,
      brandId: brand.brandId,
      securityKey: brand.securityKey,
      clock: platform.clock,
      sleep: async () => {},
      // The first answer is lost on the way back, after core-api acted on the request.
      fetch: async (input, init) => {
        signatures.push(String(new Headers(init?.headers).get('x-pts-signature')));
        const response = await fetch(input, init);
        if (++calls === 1) {
          await response.text();
          throw new DOMException('The operation timed out.', 'TimeoutError');
        }
        return response;
      },
    });
    const answer = await core.manualEvent({ eventType: 'purchase', userEmail: email });
    expect(answer.success).toBe(true);
    expect(calls).toBe(2);
    expect(signatures[1]).toBe(signatures[0]);
    expect(await rewardsOf(email)).toHaveLength(1);
  });
});
