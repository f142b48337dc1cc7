import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../clock.ts';
import { computeSignature, SIGNATURE_HEADER, signatureMatches, TIMESTAMP_HEADER } from '../signing.ts';
import { CoreApiError } from './admin-client.ts';
import { type CoreClientOptions, createCoreClient } from './core-client.ts';

const BRAND = `0x${'ab'.repeat(20)}`;
const KEY = 'pts_sk_test_key';
const USER = 'discord_42@pts.local';
const clock = createManualClock('2026-03-01T10:00:00Z');

interface Seen {
  method: string;
  path: string;
  body: string;
  signature: string;
  timestamp: number;
  signatureValid: boolean;
}
type Handler = (req: Seen, res: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let seen: Seen[] = [];
let handler: Handler = (_req, res) => reply(res, 404, { success: false, error: 'no handler', code: 'NOT_FOUND' });
const usedSignatures = new Set<string>();

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

/** A core-api stand-in that verifies every signature exactly as the server does (and refuses replays). */
function handle(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const signature = String(req.headers[SIGNATURE_HEADER] ?? '');
    const timestamp = Number(req.headers[TIMESTAMP_HEADER]);
    const expected = computeSignature({
      securityKey: KEY,
      timestamp,
      method: req.method ?? '',
      pathWithQuery: req.url ?? '',
      body,
    });
    const fresh = Math.abs(clock.now().getTime() / 1000 - timestamp) <= 300;
    const replayed = usedSignatures.has(signature);
    const signatureValid = fresh && signatureMatches(expected, signature) && !replayed;
    usedSignatures.add(signature);
    const entry = { method: req.method ?? '', path: req.url ?? '', body, signature, timestamp, signatureValid };
    seen.push(entry);
    if (!signatureValid) {
      reply(res, 401, {
        success: false,
        error: 'bad signature',
        code: 'INVALID_SIGNATURE',
        details: { reason: replayed ? 'replayed' : 'mismatch' },
      });
      return;
    }
    handler(entry, res);
  });
}

const campaignsBody = (at = '2026-03-01T10:00:00.000Z') => ({ success: true, brandId: BRAND, at, campaigns: [] });
const checkinBody = {
  success: true,
  streak: {
    currentStreak: 1,
    multiplier: 1,
    nextMilestone: { days: 7, bonus: 100, daysRemaining: 6 },
    unclaimedMilestones: [],
  },
  reward: 10,
  alreadyClaimed: false,
  day: '2026-03-01',
  eventId: 'e1',
  walletAddress: null,
};

const sleeps: number[] = [];
function client(over: Partial<CoreClientOptions> = {}) {
  return createCoreClient({
    baseUrl,
    brandId: BRAND,
    securityKey: KEY,
    clock,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...over,
  });
}

async function failure(promise: Promise<unknown>): Promise<CoreApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(CoreApiError);
  return error as CoreApiError;
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  // Each test signs at another time, so signatures of earlier tests are not replays.
  clock.advance(3_600_000);
  seen = [];
  sleeps.length = 0;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('signing', () => {
  it('signs GETs with an empty body and POSTs with the exact body; identical requests get distinct signatures', async () => {
    handler = (req, res) => (req.method === 'GET' ? reply(res, 200, campaignsBody()) : reply(res, 200, checkinBody));
    const core = client();
    await core.activeCampaigns('2026-03-01T10:00:00Z');
    await core.activeCampaigns('2026-03-01T10:00:00Z');
    const answer = await core.checkin(USER, 'discord');
    expect(answer.reward).toBe(10);
    expect(seen.map((s) => s.signatureValid)).toEqual([true, true, true]);
    expect(seen[0]?.path).toBe(`/services/campaigns/${BRAND}/active?at=2026-03-01T10%3A00%3A00.000Z`);
    expect(seen[0]?.body).toBe('');
    expect(seen[0]?.signature).not.toBe(seen[1]?.signature);
    expect(JSON.parse(seen[2]?.body ?? '')).toEqual({ brandId: BRAND, userIdentifier: USER, platform: 'discord' });
  });

  it('encodes path parameters and sends the brand on every call', async () => {
    handler = (_req, res) =>
      reply(res, 200, {
        success: true,
        chatGroup: {
          id: '7d6f4f38-1f4c-4d7b-9a53-3c8f3f7c2a11',
          chatGroupId: 'telegram:-100123',
          brandId: BRAND,
          groupName: 'G',
          isActive: true,
          configMetadata: {
            naturalParticipation: {
              enabled: true,
              gmReward: 25,
              gnReward: 15,
              gmCooldownHours: 24,
              gnCooldownHours: 24,
              gmResponseEnabled: false,
              gnResponseEnabled: false,
            },
            dailyReward: 10,
            welcomeBonus: 50,
            welcomeMessageEnabled: true,
          },
          setupBy: 'a',
          setupAt: '2026-03-01T10:00:00.000Z',
          createdAt: '2026-03-01T10:00:00.000Z',
          updatedAt: '2026-03-01T10:00:00.000Z',
        },
      });
    const group = await client().chatGroupUpdate('telegram:-100123', { configMetadata: { dailyReward: 20 } });
    expect(group.chatGroupId).toBe('telegram:-100123');
    expect(seen[0]).toMatchObject({ method: 'PATCH', path: '/services/chat-groups/telegram%3A-100123' });
    expect(seen[0]?.signatureValid).toBe(true);
  });
});

describe('retries', () => {
  it('re-signs with another timestamp when a second client already used the signature', async () => {
    handler = (_req, res) => reply(res, 200, campaignsBody());
    await client().activeCampaigns('2026-03-01T10:00:00Z');
    await client().activeCampaigns('2026-03-01T10:00:00Z');
    expect(seen.map((s) => s.signatureValid)).toEqual([true, false, true]);
    expect(sleeps).toEqual([]);
  });

  it('does not re-sign a wrong key', async () => {
    handler = (_req, res) => reply(res, 200, campaignsBody());
    const error = await failure(client({ securityKey: 'pts_sk_other' }).activeCampaigns());
    expect(error).toMatchObject({ status: 401, code: 'INVALID_SIGNATURE' });
    expect(seen).toHaveLength(1);
  });

  it('retries a GET on 503 with back-off and a fresh signature, then succeeds', async () => {
    let calls = 0;
    handler = (_req, res) =>
      ++calls < 3
        ? reply(res, 503, { success: false, error: 'busy', code: 'SERVICE_UNAVAILABLE' })
        : reply(res, 200, campaignsBody());
    const answer = await client().activeCampaigns();
    expect(answer.success).toBe(true);
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.signature)).size).toBe(3);
    expect(seen.every((s) => s.signatureValid)).toBe(true);
    // Full jitter with random 0.5: half of 200 ms, then half of 400 ms.
    expect(sleeps).toEqual([100, 200]);
  });

  it('gives up after the configured retries', async () => {
    handler = (_req, res) => reply(res, 503, { success: false, error: 'busy', code: 'SERVICE_UNAVAILABLE' });
    const error = await failure(client({ retries: 2 }).activeCampaigns());
    expect(error.status).toBe(503);
    expect(seen).toHaveLength(3);
  });

  it('never repeats a non-idempotent POST on 500, nor a deduplicated one', async () => {
    handler = (_req, res) => reply(res, 500, { success: false, error: 'boom', code: 'INTERNAL_ERROR' });
    const redeem = await failure(client().redeemPerk({ perkId: 'p1', userIdentifier: USER }));
    expect(redeem).toMatchObject({ status: 500, code: 'INTERNAL_ERROR', message: 'boom' });
    expect(seen).toHaveLength(1);
    seen = [];
    await failure(client().checkin(USER, 'discord'));
    expect(seen).toHaveLength(1);
  });

  it('repeats a deduplicated POST on 503 but a redemption not even then', async () => {
    let calls = 0;
    handler = (_req, res) =>
      ++calls === 1
        ? reply(res, 503, { success: false, error: 'busy', code: 'SERVICE_UNAVAILABLE' })
        : reply(res, 200, checkinBody);
    expect((await client().checkin(USER, 'discord')).reward).toBe(10);
    expect(seen).toHaveLength(2);
    seen = [];
    handler = (_req, res) => reply(res, 503, { success: false, error: 'busy', code: 'SERVICE_UNAVAILABLE' });
    await failure(client().redeemPerk({ perkId: 'p1', userIdentifier: USER }));
    expect(seen).toHaveLength(1);
  });

  it('honours Retry-After on a rate limit (any call), up to the cap', async () => {
    let calls = 0;
    handler = (_req, res) =>
      ++calls === 1
        ? reply(
            res,
            429,
            { success: false, error: 'slow down', code: 'RATE_LIMIT_EXCEEDED', retryAfter: 2 },
            { 'retry-after': '2' },
          )
        : reply(res, 200, { success: true, confirmationCode: 'ABC', perk: null });
    const answer = await client().redeemPerk({ perkId: 'p1', userIdentifier: USER });
    expect(answer.confirmationCode).toBe('ABC');
    expect(sleeps).toEqual([2000]);

    seen = [];
    sleeps.length = 0;
    handler = (_req, res) =>
      reply(res, 429, { success: false, error: 'slow down', code: 'RATE_LIMIT_EXCEEDED' }, { 'retry-after': '120' });
    const error = await failure(client({ maxRetryAfterMs: 30_000 }).activeCampaigns());
    expect(error.retryAfter).toBe(120);
    expect(seen).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('reads a Retry-After date against the client clock, not the machine time', async () => {
    let calls = 0;
    const at = new Date(clock.now().getTime() + 3_000).toUTCString();
    handler = (_req, res) =>
      ++calls === 1
        ? reply(res, 429, { success: false, error: 'slow down', code: 'RATE_LIMIT_EXCEEDED' }, { 'retry-after': at })
        : reply(res, 200, { success: true, confirmationCode: 'ABC', perk: null });
    await client().redeemPerk({ perkId: 'p1', userIdentifier: USER });
    expect(sleeps).toEqual([3000]);
  });

  it('does not retry a cooldown 429 (a business answer, not a rate limit)', async () => {
    handler = (_req, res) =>
      reply(
        res,
        429,
        { success: false, error: 'cooldown', code: 'COOLDOWN_ACTIVE', details: { cooldownSeconds: 86400 } },
        { 'retry-after': '5' },
      );
    const error = await failure(client().manualEvent({ eventType: 'good_morning', userEmail: USER }));
    expect(error).toMatchObject({ status: 429, code: 'COOLDOWN_ACTIVE', retryAfter: 5 });
    expect(error.details).toEqual({ cooldownSeconds: 86400 });
    expect(seen).toHaveLength(1);
  });
});

describe('failures', () => {
  it('times out, retries a GET afresh, and resends a change with the same signature', async () => {
    handler = () => undefined; // never answers
    const once = await failure(client({ timeoutMs: 100, retries: 0 }).activeCampaigns());
    expect(once).toMatchObject({ status: 0, code: 'TIMEOUT' });
    seen = [];
    await failure(client({ timeoutMs: 100, retries: 1 }).activeCampaigns());
    expect(seen).toHaveLength(2);
    seen = [];
    // The check-in may have happened: the retry carries the same signature, so the server can only answer
    // with the first attempt's outcome (docs/api/events.md, "Retries").
    await failure(client({ timeoutMs: 100, retries: 1 }).checkin(USER, 'discord'));
    expect(seen).toHaveLength(2);
    expect(seen[1]?.signature).toBe(seen[0]?.signature);
  });

  it('parses error bodies, non-JSON errors and unexpected bodies', async () => {
    handler = (_req, res) =>
      reply(res, 400, {
        success: false,
        error: 'Invalid request body: milestoneDays: too small',
        code: 'VALIDATION_ERROR',
        details: { errors: ['milestoneDays: too small'], field: 'milestoneDays' },
      });
    const invalid = await failure(client().claimMilestone(USER, 0));
    expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', retryAfter: undefined });
    expect(invalid.details?.field).toBe('milestoneDays');

    handler = (_req, res) => reply(res, 502, '<html>bad gateway</html>');
    const gateway = await failure(client({ retries: 0 }).leaderboard({ metric: 'streak' }));
    expect(gateway).toMatchObject({ status: 502, code: 'HTTP_502' });

    handler = (_req, res) => reply(res, 200, { success: true, leaderboard: 'nope' });
    const odd = await failure(client().leaderboard());
    expect(odd.code).toBe('INVALID_RESPONSE');
    expect(odd.details?.errors?.length).toBeGreaterThan(0);
  });

  it('reports an unreachable server and retries a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await failure(
      client({ baseUrl: `http://127.0.0.1:${port}`, retries: 2 }).redeemPerk({
        perkId: 'p1',
        userIdentifier: USER,
      }),
    );
    expect(error).toMatchObject({ status: 0, code: 'UNREACHABLE' });
    expect(sleeps).toHaveLength(2);
  });
});
