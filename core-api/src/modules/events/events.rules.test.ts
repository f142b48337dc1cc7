import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';

let platform: TestPlatform;
let brand: CreatedBrand;
let emailCounter = 0;
const nextEmail = () => `user${++emailCounter}@example.com`;

const event = (overrides: Record<string, unknown> = {}) => ({
  brandId: brand.brandId,
  eventType: 'account_creation',
  userEmail: nextEmail(),
  domain: 'shop.example.com',
  ...overrides,
});

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({
    domain: 'shop.example.com',
    rules: [
      { eventType: 'account_creation', rewardAmount: 100 },
      { eventType: 'daily_visit', rewardAmount: 5, cooldownHours: 0, maxClaims: 3 },
      { eventType: 'unlimited_ping', rewardAmount: 1, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'limited_drop', rewardAmount: 7, cooldownHours: 0, maxClaims: -1, maxTotal: 2 },
      { eventType: 'discord_gm', rewardAmount: 25, channels: ['general', 'gm'] },
      { eventType: 'retired', rewardAmount: 9, active: false },
      { eventType: 'custom_quiz', rewardAmount: 40 },
    ],
  });
});

afterAll(async () => {
  await platform?.stop();
});

describe('manual-event', () => {
  it('rewards a new user: creates the wallet, mints on chain and returns the real transaction hash', async () => {
    const email = nextEmail();
    const res = await platform.post('/pts-api/manual-event', event({ userEmail: email }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      rewardAmount: 100,
      eventType: 'account_creation',
      walletCreated: true,
      mintStatus: 'submitted',
    });
    expect(res.body.eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.walletAddress).toMatch(/^0x[a-f0-9]{40}$/);
    expect(res.body.transactionHash).toMatch(/^0x[a-f0-9]{64}$/);
    expect(res.body.reward).toEqual({
      amount: 100,
      eventType: 'account_creation',
      walletAddress: res.body.walletAddress,
      transactionHash: res.body.transactionHash,
    });
    await waitForMintsSettled(platform);
    expect(await tokenBalance(platform, res.body.walletAddress)).toBe(100n);

    const again = await platform.post('/pts-api/manual-event', event({ userEmail: email, eventType: 'custom_quiz' }));
    expect(again.status).toBe(200);
    expect(again.body.walletCreated).toBe(false);
    expect(again.body.walletAddress).toBe(res.body.walletAddress);
  });

  it('gives a new user the wallet its id derives, and one to a user who existed without a wallet', async () => {
    const wallets = platform.deps.wallets as unknown as { privateKeyForUser(id: bigint): `0x${string}` };
    const { privateKeyToAddress } = await import('viem/accounts');
    const fresh = nextEmail();
    const res = await platform.post('/pts-api/manual-event', event({ userEmail: fresh }));
    expect(res.body).toMatchObject({ walletCreated: true, mintStatus: 'submitted' });
    const row = await platform.deps.db
      .selectFrom('users')
      .select(['id', 'wallet_address'])
      .where('email', '=', fresh)
      .executeTakeFirstOrThrow();
    expect(row.wallet_address).toBe(res.body.walletAddress);
    expect(privateKeyToAddress(wallets.privateKeyForUser(row.id)).toLowerCase()).toBe(res.body.walletAddress);

    // A user row another path created without a wallet (e.g. a crash between its two steps).
    const bare = nextEmail();
    const inserted = await platform.deps.db
      .insertInto('users')
      .values({ email: bare })
      .returning('id')
      .executeTakeFirstOrThrow();
    const late = await platform.post('/pts-api/manual-event', event({ userEmail: bare }));
    expect(late.body).toMatchObject({ walletCreated: true, mintStatus: 'submitted' });
    expect(privateKeyToAddress(wallets.privateKeyForUser(inserted.id)).toLowerCase()).toBe(late.body.walletAddress);
  });

  it('answers 400 with every validation problem listed in details.errors', async () => {
    const res = await platform.post('/pts-api/manual-event', {
      brandId: 'not-an-address',
      eventType: 'has spaces!',
      userEmail: 'nobody',
      sourceUrl: 'ftp://example.com/x',
    });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    const errors: string[] = res.body.details.errors;
    expect(errors.some((e) => e.startsWith('brandId:'))).toBe(true);
    expect(errors.some((e) => e.startsWith('eventType:'))).toBe(true);
    expect(errors.some((e) => e.startsWith('userEmail:'))).toBe(true);
    expect(errors.some((e) => e.startsWith('sourceUrl:'))).toBe(true);
  });

  it('uses the INVALID_EMAIL code when only the email is wrong', async () => {
    const res = await platform.post('/pts-api/manual-event', event({ userEmail: 'not-an-email' }));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_EMAIL');
    expect(res.body.details).toMatchObject({ field: 'userEmail', value: 'not-an-email' });
  });

  it('rejects an email over 254 characters and an event type over 50', async () => {
    const long = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`;
    expect(long.length).toBeGreaterThan(254);
    expect((await platform.post('/pts-api/manual-event', event({ userEmail: long }))).status).toBe(400);
    expect((await platform.post('/pts-api/manual-event', event({ eventType: 'x'.repeat(51) }))).status).toBe(400);
  });

  it('strips control characters from strings before validating them', async () => {
    const res = await platform.post('/pts-api/manual-event', event({ userEmail: `ctrl\u0007${nextEmail()}` }));
    expect(res.status).toBe(200);
  });

  it('answers 400 INVALID_JSON for a body that is not JSON and 415 without a JSON content type', async () => {
    const bad = await fetch(`${platform.url}/pts-api/manual-event`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"brandId":',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('INVALID_JSON');
    const text = await fetch(`${platform.url}/pts-api/manual-event`, { method: 'POST', body: 'hello' });
    expect(text.status).toBe(415);
  });

  it('answers 413 for a body over 10 KB', async () => {
    const res = await platform.post('/pts-api/manual-event', event({ metadata: { blob: 'x'.repeat(11 * 1024) } }));
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  describe('domain authorization', () => {
    it('takes domain, then sourceUrl, then Origin; subdomains match their parent', async () => {
      const { domain: _omit, ...withoutDomain } = event();
      const viaSource = await platform.post('/pts-api/manual-event', {
        ...withoutDomain,
        sourceUrl: 'https://www.shop.example.com/signup',
      });
      expect(viaSource.status).toBe(200);
      const viaOrigin = await platform.post(
        '/pts-api/manual-event',
        { ...event(), domain: undefined },
        { origin: 'https://shop.example.com' },
      );
      expect(viaOrigin.status).toBe(200);
      // `domain` wins over a matching sourceUrl.
      const domainFirst = await platform.post(
        '/pts-api/manual-event',
        event({ domain: 'evil.test', sourceUrl: 'https://shop.example.com/' }),
      );
      expect(domainFirst.status).toBe(403);
    });

    it('answers 403 naming the offending and the configured domain', async () => {
      const res = await platform.post('/pts-api/manual-event', event({ domain: 'notshop-example.com' }));
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('DOMAIN_NOT_AUTHORIZED');
      expect(res.body.error).toContain('notshop-example.com');
      expect(res.body.error).toContain('shop.example.com');
      expect(res.body.details).toMatchObject({ domain: 'notshop-example.com', configuredDomain: 'shop.example.com' });
    });

    it('does not accept a look-alike suffix as a subdomain', async () => {
      const res = await platform.post('/pts-api/manual-event', event({ domain: 'evilshop.example.com.attacker.io' }));
      expect(res.status).toBe(403);
    });

    it('answers 403 when no domain can be resolved', async () => {
      const res = await platform.post('/pts-api/manual-event', { ...event(), domain: undefined });
      expect(res.status).toBe(403);
      expect(res.body.error).toContain('domain');
    });
  });

  it('answers 403 AUTOMATION_DISABLED when automation is off for the brand', async () => {
    const other = await platform.createBrand({
      domain: 'paused.example.com',
      rules: [{ eventType: 'account_creation', rewardAmount: 10 }],
    });
    await platform.deps.db
      .updateTable('brands')
      .set({ automation_enabled: false })
      .where('address', '=', other.brandId)
      .execute();
    platform.changes.emit({ kind: 'brand', brandId: other.brandId });
    const res = await platform.post(
      '/pts-api/manual-event',
      event({ brandId: other.brandId, domain: 'paused.example.com' }),
    );
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('AUTOMATION_DISABLED');
  });

  it('answers 404 for an unknown brand and 400 for an event type the brand has not configured or retired', async () => {
    const unknown = await platform.post('/pts-api/manual-event', event({ brandId: `0x${'ab'.repeat(20)}` }));
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('BRAND_NOT_FOUND');
    const missing = await platform.post('/pts-api/manual-event', event({ eventType: 'never_configured' }));
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('UNKNOWN_EVENT_TYPE');
    expect(missing.body.details.availableEventTypes).toContain('account_creation');
    const retired = await platform.post('/pts-api/manual-event', event({ eventType: 'retired' }));
    expect(retired.status).toBe(400);
  });

  describe('channel constraints', () => {
    it('processes a matching channel, refuses another with the allowed list, and skips the check without channel_id', async () => {
      expect(
        (await platform.post('/pts-api/manual-event', event({ eventType: 'discord_gm', channel_id: 'gm' }))).status,
      ).toBe(200);
      const refused = await platform.post(
        '/pts-api/manual-event',
        event({ eventType: 'discord_gm', channel_id: 'random' }),
      );
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('CHANNEL_NOT_ALLOWED');
      expect(refused.body.details.allowedChannels).toEqual(['general', 'gm']);
      expect((await platform.post('/pts-api/manual-event', event({ eventType: 'discord_gm' }))).status).toBe(200);
    });
  });

  it('answers 409 with existingEventId for the same event and user inside the duplicate window', async () => {
    const email = nextEmail();
    const first = await platform.post(
      '/pts-api/manual-event',
      event({ eventType: 'unlimited_ping', userEmail: email }),
    );
    expect(first.status).toBe(200);
    const second = await platform.post(
      '/pts-api/manual-event',
      event({ eventType: 'unlimited_ping', userEmail: email }),
    );
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('DUPLICATE_EVENT');
    expect(second.body.details.existingEventId).toBe(first.body.eventId);
    platform.clock.advance(61_000);
    const later = await platform.post(
      '/pts-api/manual-event',
      event({ eventType: 'unlimited_ping', userEmail: email }),
    );
    expect(later.status).toBe(200);
  });

  it('answers 429 inside the cooldown (24 h by default) with reason, cooldownSeconds and retryAfter', async () => {
    const email = nextEmail();
    expect((await platform.post('/pts-api/manual-event', event({ userEmail: email }))).status).toBe(200);
    platform.clock.advance(2 * 3600 * 1000);
    const res = await platform.post('/pts-api/manual-event', event({ userEmail: email }));
    expect(res.status).toBe(429);
    expect(res.body.error).toBe('Cooldown active');
    expect(res.body.details).toMatchObject({ reason: 'cooldown_not_expired', cooldownSeconds: 86400 });
    expect(res.body.retryAfter).toBe(22 * 3600);
    expect(res.headers.get('retry-after')).toBe(String(22 * 3600));

    // After the cooldown the default max claims (1) is what stops the user.
    platform.clock.advance(22 * 3600 * 1000 + 1000);
    const after = await platform.post('/pts-api/manual-event', event({ userEmail: email }));
    expect(after.status).toBe(429);
    expect(after.body.error).toBe('Max claims reached');
    expect(after.body.details).toMatchObject({ reason: 'max_claims_reached', totalClaims: 1, maxClaims: 1 });
  });

  it('stops a user at the rule max claims with totalClaims and maxClaims', async () => {
    const email = nextEmail();
    for (let i = 0; i < 3; i++) {
      expect(
        (await platform.post('/pts-api/manual-event', event({ eventType: 'daily_visit', userEmail: email }))).status,
      ).toBe(200);
      platform.clock.advance(61_000);
    }
    const res = await platform.post('/pts-api/manual-event', event({ eventType: 'daily_visit', userEmail: email }));
    expect(res.status).toBe(429);
    expect(res.body.details).toEqual(
      expect.objectContaining({ reason: 'max_claims_reached', totalClaims: 3, maxClaims: 3 }),
    );
  });

  it('stops everyone at the global max total', async () => {
    expect((await platform.post('/pts-api/manual-event', event({ eventType: 'limited_drop' }))).status).toBe(200);
    expect((await platform.post('/pts-api/manual-event', event({ eventType: 'limited_drop' }))).status).toBe(200);
    const res = await platform.post('/pts-api/manual-event', event({ eventType: 'limited_drop' }));
    expect(res.status).toBe(429);
    expect(res.body.code).toBe('MAX_TOTAL_CLAIMS_REACHED');
    expect(res.body.details).toMatchObject({ reason: 'max_total_claims_reached', totalClaims: 2, maxTotal: 2 });
  });

  it('counts claims made before a max total was set against it', async () => {
    await platform.setRule(brand.brandId, { eventType: 'late_cap', rewardAmount: 2, cooldownHours: 0, maxClaims: -1 });
    for (let i = 0; i < 2; i++) {
      expect((await platform.post('/pts-api/manual-event', event({ eventType: 'late_cap' }))).status).toBe(200);
    }
    await platform.setRule(brand.brandId, {
      eventType: 'late_cap',
      rewardAmount: 2,
      cooldownHours: 0,
      maxClaims: -1,
      maxTotal: 3,
    });
    expect((await platform.post('/pts-api/manual-event', event({ eventType: 'late_cap' }))).status).toBe(200);
    const res = await platform.post('/pts-api/manual-event', event({ eventType: 'late_cap' }));
    expect(res.status).toBe(429);
    expect(res.body.details).toMatchObject({ totalClaims: 3, maxTotal: 3 });
  });

  describe('privileged origins', () => {
    it('ignores metadata.source and skip_cooldown on unsigned requests', async () => {
      const email = nextEmail();
      expect((await platform.post('/pts-api/manual-event', event({ userEmail: email }))).status).toBe(200);
      platform.clock.advance(61_000);
      const res = await platform.post(
        '/pts-api/manual-event',
        event({ userEmail: email, metadata: { source: 'chat_manual_reward', skip_cooldown: true } }),
      );
      expect(res.status).toBe(429);
      expect(res.body.error).toBe('Cooldown active');
    });

    it('lets signed chat_manual_reward, voice_claim and gateway_event bypass cooldown and max claims', async () => {
      const email = nextEmail();
      const sources = ['chat_manual_reward', 'voice_claim', 'gateway_event', 'chat_manual_reward'];
      for (const source of sources) {
        const res = await platform.signedPost(
          '/pts-api/manual-event',
          event({ userEmail: email, domain: undefined, metadata: { source } }),
          brand.securityKey,
        );
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        // Identical bodies signed in the same second carry the same signature, which is refused as a replay.
        platform.clock.advance(1000);
      }
      const stored = await platform.deps.db
        .selectFrom('events')
        .select(['source'])
        .where('user_email', '=', email)
        .where('status', '=', 'accepted')
        .execute();
      expect(stored.map((row) => row.source).sort()).toEqual([...sources].sort());
    });

    it('lets signed skip_cooldown bypass the cooldown but not max claims', async () => {
      const email = nextEmail();
      const body = () => event({ eventType: 'daily_visit', userEmail: email, metadata: { skip_cooldown: true } });
      await platform.setRule(brand.brandId, {
        eventType: 'daily_visit',
        rewardAmount: 5,
        cooldownHours: 24,
        maxClaims: 3,
      });
      for (let i = 0; i < 3; i++) {
        expect((await platform.signedPost('/pts-api/manual-event', body(), brand.securityKey)).status).toBe(200);
        platform.clock.advance(61_000);
      }
      const res = await platform.signedPost('/pts-api/manual-event', body(), brand.securityKey);
      expect(res.status).toBe(429);
      expect(res.body.details.reason).toBe('max_claims_reached');
      await platform.setRule(brand.brandId, {
        eventType: 'daily_visit',
        rewardAmount: 5,
        cooldownHours: 0,
        maxClaims: 3,
      });
    });

    it('still applies the global max total to privileged origins', async () => {
      await platform.setRule(brand.brandId, {
        eventType: 'voice_bonus',
        rewardAmount: 3,
        cooldownHours: 0,
        maxClaims: 1,
        maxTotal: 1,
      });
      const send = () =>
        platform.signedPost(
          '/pts-api/manual-event',
          event({ eventType: 'voice_bonus', metadata: { source: 'voice_claim' } }),
          brand.securityKey,
        );
      expect((await send()).status).toBe(200);
      const res = await send();
      expect(res.status).toBe(429);
      expect(res.body.code).toBe('MAX_TOTAL_CLAIMS_REACHED');
    });
  });

  it('records rejected events with their reason', async () => {
    const email = nextEmail();
    await platform.post('/pts-api/manual-event', event({ userEmail: email, domain: 'evil.test' }));
    const rows = await platform.deps.db.selectFrom('events').selectAll().where('user_email', '=', email).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'rejected', reason: 'DOMAIN_NOT_AUTHORIZED' });
  });
});

describe('bulk-events', () => {
  it('processes each event in order and reports per-event failures with success, error, code and status', async () => {
    const email = nextEmail();
    const res = await platform.post('/pts-api/bulk-events', {
      events: [
        event({ userEmail: email }),
        event({ userEmail: email }),
        { brandId: brand.brandId, eventType: 'account_creation' },
        event({ eventType: 'custom_quiz' }),
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: false, processed: 2, failed: 2 });
    const [first, duplicate, invalid, quiz] = res.body.results;
    expect(first).toMatchObject({ success: true, rewardAmount: 100 });
    expect(first.transactionHash).toMatch(/^0x[a-f0-9]{64}$/);
    expect(duplicate).toMatchObject({ success: false, index: 1, code: 'DUPLICATE_EVENT', status: 409 });
    expect(invalid).toMatchObject({ success: false, index: 2, code: 'VALIDATION_ERROR', status: 400 });
    expect(invalid.details.errors.some((e: string) => e.startsWith('userEmail'))).toBe(true);
    expect(quiz).toMatchObject({ success: true, rewardAmount: 40 });
  });

  it('accepts 1 to 100 events and refuses 0 or 101', async () => {
    expect((await platform.post('/pts-api/bulk-events', { events: [] })).status).toBe(400);
    const many = Array.from({ length: 101 }, () => event());
    const res = await platform.post('/pts-api/bulk-events', { events: many });
    expect(res.status).toBe(400);
    expect(res.body.details.errors[0]).toContain('100');
  });

  it('mints a full batch of 100 distinct users in few transactions', async () => {
    const events = Array.from({ length: 100 }, () => event({ eventType: 'unlimited_ping' }));
    const res = await platform.post('/pts-api/bulk-events', { events });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, processed: 100, failed: 0 });
    const hashes = new Set(res.body.results.map((r: { transactionHash: string }) => r.transactionHash));
    expect(hashes.size).toBeLessThanOrEqual(5);
  });
});

describe('event-config', () => {
  it('lists only active rules with the spec fields', async () => {
    const res = await platform.get(`/pts-api/event-config?brandId=${brand.brandId.toUpperCase().replace('0X', '0x')}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.body.success).toBe(true);
    expect(res.body.brandId).toBe(brand.brandId);
    expect(res.body.count).toBe(res.body.events.length);
    const types = res.body.events.map((e: { eventType: string }) => e.eventType);
    expect(types).not.toContain('retired');
    const gm = res.body.events.find((e: { eventType: string }) => e.eventType === 'discord_gm');
    expect(gm).toEqual({
      eventId: expect.stringMatching(/^custom_[0-9a-f]{16}$/),
      eventType: 'discord_gm',
      rewardAmount: 25,
      maxClaims: 1,
      cooldownHours: 24,
      detectionMethod: 'manual',
      detectionConfig: { channels: ['general', 'gm'] },
      isCustom: true,
    });
    const quiz = res.body.events.find((e: { eventType: string }) => e.eventType === 'custom_quiz');
    expect(quiz).toMatchObject({ eventId: 'custom_quiz', isCustom: true });
  });

  it('serves from its cache until a rule of the brand changes', async () => {
    const before = await platform.get(`/pts-api/event-config?brandId=${brand.brandId}`);
    // A write behind the service's back is not seen while cached...
    await platform.deps.db
      .updateTable('event_rules')
      .set({ reward_amount: 999 })
      .where('event_type', '=', 'custom_quiz')
      .execute();
    const cached = await platform.get(`/pts-api/event-config?brandId=${brand.brandId}`);
    expect(cached.body).toEqual(before.body);
    // ...a change through the service invalidates at once.
    await platform.setRule(brand.brandId, { eventType: 'custom_quiz', rewardAmount: 41 });
    const fresh = await platform.get(`/pts-api/event-config?brandId=${brand.brandId}`);
    expect(fresh.body.events.find((e: { eventType: string }) => e.eventType === 'custom_quiz').rewardAmount).toBe(41);
  });

  it('answers 400 for a malformed brandId and 404 for an unknown brand', async () => {
    expect((await platform.get('/pts-api/event-config')).status).toBe(400);
    expect((await platform.get('/pts-api/event-config?brandId=0x123')).status).toBe(400);
    expect((await platform.get(`/pts-api/event-config?brandId=0x${'cd'.repeat(20)}`)).status).toBe(404);
  });
});
