import { randomUUID } from 'node:crypto';
import { type CreatedBrand, signRequest, webhookEventSchema } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startWebhookReceiver } from '../../../test/fakes/webhook-receiver.ts';
import { startTestPlatform, type TestPlatform, type TestResponse } from '../../../test/platform.ts';

let platform: TestPlatform;
let brand: CreatedBrand;
let bare: CreatedBrand;
let seq = 0;

const DAY_MS = 86_400_000;

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '10000', PTS_WEBHOOK_POLL_MS: '50' });
  platform.clock.set('2026-03-01T10:00:00Z');
  brand = await platform.createBrand({
    domain: 'streaks.example',
    rules: [
      { eventType: 'daily_checkin', rewardAmount: 10, maxClaims: -1, cooldownHours: 0 },
      { eventType: 'streak_milestone', rewardAmount: 0, maxClaims: -1, cooldownHours: 0 },
    ],
  });
  bare = await platform.createBrand({ domain: 'bare.example', name: 'No streak rules' });
});

afterAll(async () => {
  await platform?.stop();
});

/**
 * A signed request at the platform clock. Each gets its own timestamp offset (within the tolerance) so
 * identical bodies sent together carry distinct signatures, as separate real requests would.
 */
async function signed(method: string, path: string, body: unknown, key = brand.securityKey): Promise<TestResponse> {
  const raw = body === undefined ? '' : JSON.stringify(body);
  const timestamp = Math.floor(platform.clock.now().getTime() / 1000) - (seq++ % 250);
  const headers = signRequest({ securityKey: key, method, pathWithQuery: path, body: raw, timestamp });
  const response = await fetch(`${platform.url}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: raw }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

const checkin = (user: string, b: CreatedBrand = brand) =>
  signed('POST', '/services/checkin', { brandId: b.brandId, userIdentifier: user, platform: 'discord' }, b.securityKey);
const activity = (user: string) =>
  signed('POST', '/services/streak/record-activity', {
    brandId: brand.brandId,
    userIdentifier: user,
    platform: 'telegram',
    streakType: 'daily',
  });
const status = (user: string) =>
  signed('GET', `/services/streak/status/${brand.brandId}/${encodeURIComponent(user)}`, undefined);
const claim = (user: string, milestoneDays: number) =>
  signed('POST', '/services/streak/claim-milestone', { brandId: brand.brandId, userIdentifier: user, milestoneDays });

async function mintsOf(eventId: string) {
  return platform.deps.db.selectFrom('reward_mints').selectAll().where('event_id', '=', eventId).execute();
}

describe('POST /services/checkin', () => {
  it('pays the daily reward × multiplier once per UTC day and mints it', async () => {
    const user = 'discord_1001@pts.local';
    platform.clock.set('2026-03-01T10:00:00Z');
    const first = await checkin(user);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      success: true,
      reward: 10,
      alreadyClaimed: false,
      day: '2026-03-01',
      streak: { currentStreak: 1, multiplier: 1, nextMilestone: { days: 7, bonus: 100, daysRemaining: 6 } },
    });
    expect(first.body.walletAddress).toMatch(/^0x[0-9a-fA-F]{40}$/);

    const again = await checkin(user);
    expect(again.body).toMatchObject({ success: true, reward: 0, alreadyClaimed: true, eventId: first.body.eventId });

    platform.clock.set('2026-03-02T09:00:00Z');
    expect((await checkin(user)).body).toMatchObject({ reward: 10, streak: { currentStreak: 2, multiplier: 1 } });
    platform.clock.set('2026-03-03T20:00:00Z');
    const third = await checkin(user);
    expect(third.body).toMatchObject({ reward: 12, streak: { currentStreak: 3, multiplier: 1.25 } });

    await waitForMintsSettled(platform);
    expect(await tokenBalance(platform, first.body.walletAddress)).toBe(32n);
    const event = await platform.deps.db
      .selectFrom('events')
      .selectAll()
      .where('id', '=', third.body.eventId)
      .executeTakeFirstOrThrow();
    expect(event).toMatchObject({ event_type: 'daily_checkin', status: 'accepted', user_email: user });
    expect(event.reward_amount).toBe(12n);
    expect(event.metadata).toMatchObject({ current_streak: 3, streak_multiplier: 1.25, base_reward: 10 });
  });

  it('starts a new day at midnight UTC, seconds after the previous check-in', async () => {
    const user = 'midnight@example.com';
    platform.clock.set('2026-03-10T23:59:50Z');
    expect((await checkin(user)).body).toMatchObject({ reward: 10, day: '2026-03-10' });
    platform.clock.set('2026-03-11T00:00:05Z');
    const next = await checkin(user);
    expect(next.body).toMatchObject({ reward: 10, alreadyClaimed: false, day: '2026-03-11' });
    expect(next.body.streak.currentStreak).toBe(2);
    platform.clock.set('2026-03-11T23:59:59Z');
    expect((await checkin(user)).body).toMatchObject({ reward: 0, alreadyClaimed: true });
  });

  it('pays 20 concurrent check-ins of one user once: one reward, one mint', async () => {
    const user = 'telegram_424242@pts.local';
    platform.clock.set('2026-03-12T12:00:00Z');
    const responses = await Promise.all(Array.from({ length: 20 }, () => checkin(user)));
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const paid = responses.filter((r) => r.body.alreadyClaimed === false);
    expect(paid).toHaveLength(1);
    expect(paid[0]!.body.reward).toBe(10);
    expect(responses.filter((r) => r.body.alreadyClaimed === true && r.body.reward === 0)).toHaveLength(19);

    await waitForMintsSettled(platform);
    const rows = await platform.deps.db
      .selectFrom('checkins')
      .selectAll()
      .where('brand_id', '=', brand.brandId)
      .where('user_key', '=', user)
      .execute();
    expect(rows).toHaveLength(1);
    const events = await platform.deps.db
      .selectFrom('events')
      .select('id')
      .where('user_email', '=', user)
      .where('event_type', '=', 'daily_checkin')
      .execute();
    expect(events).toHaveLength(1);
    expect(await mintsOf(events[0]!.id)).toHaveLength(1);
    expect(await tokenBalance(platform, paid[0]!.body.walletAddress)).toBe(10n);
  });

  it('refuses an unsigned or badly signed check-in and names what to fix', async () => {
    const body = { brandId: brand.brandId, userIdentifier: 'x@example.com', platform: 'web' };
    const unsigned = await platform.post('/services/checkin', body);
    expect(unsigned.status).toBe(401);
    expect(unsigned.body).toMatchObject({ success: false, code: 'INVALID_SIGNATURE' });
    expect(unsigned.body.details.reason).toBe('signature_required');
    const wrongKey = await checkin('x@example.com', { ...brand, securityKey: bare.securityKey });
    expect(wrongKey.status).toBe(401);
    const invalid = await signed('POST', '/services/checkin', { brandId: brand.brandId, userIdentifier: 'nope' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatch(/userIdentifier/);
    expect(invalid.body.error).toMatch(/platform/);
  });

  it('needs an active daily_checkin rule and records nothing without one', async () => {
    const res = await checkin('norule@example.com', bare);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'UNKNOWN_EVENT_TYPE', details: { reason: 'rule_missing' } });
    expect(res.body.error).toMatch(/daily_checkin/);
    const rows = await platform.deps.db
      .selectFrom('checkins')
      .selectAll()
      .where('brand_id', '=', bare.brandId)
      .execute();
    expect(rows).toHaveLength(0);
  });

  it('honours a daily_checkin rule the admin creates right after a refused check-in', async () => {
    const late = await platform.createBrand({ domain: 'late-rule.example', name: 'Rule comes later' });
    const user = 'late@example.com';
    const before = await checkin(user, late);
    expect(before.status).toBe(400);
    expect(before.body.details).toMatchObject({ reason: 'rule_missing' });
    // The admin sets the rule through the admin API, as `pts rule set` does.
    const set = await fetch(`${platform.url}/admin/brands/${late.brandId}/rules/daily_checkin`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${platform.deps.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rewardAmount: 7, maxClaims: -1, cooldownHours: 0 }),
    });
    expect(set.status).toBe(200);
    const after = await checkin(user, late);
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(after.body).toMatchObject({ reward: 7, alreadyClaimed: false });
  });

  it("applies the rule's limits: a refused reward pays 0 and the check-in still counts", async () => {
    const limited = await platform.createBrand({
      domain: 'limited.example',
      rules: [{ eventType: 'daily_checkin', rewardAmount: 5, maxClaims: 1, cooldownHours: 24 }],
    });
    const user = 'limited@example.com';
    platform.clock.set('2026-03-12T08:00:00Z');
    expect((await checkin(user, limited)).body).toMatchObject({ reward: 5 });
    platform.clock.set('2026-03-13T01:00:00Z');
    const second = await checkin(user, limited);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      reward: 0,
      alreadyClaimed: false,
      rewardRefused: { code: 'MAX_CLAIMS_REACHED' },
      streak: { currentStreak: 2 },
    });
  });
});

describe('recovery of a reward left without its event (process died between the two transactions)', () => {
  it('re-drives a check-in reward once, on a later check-in of the same day, even under concurrency', async () => {
    const user = 'crashed-checkin@example.com';
    platform.clock.set('2026-08-01T10:00:00Z');
    const eventId = randomUUID();
    await platform.deps.db
      .insertInto('checkins')
      .values({
        brand_id: brand.brandId,
        user_key: user,
        day: '2026-08-01',
        platform: 'discord',
        event_id: eventId,
        streak: 1,
        multiplier: 1,
        reward: 10n,
        created_at: platform.clock.now(),
      })
      .execute();
    // Too young: the original request may still be on its way.
    expect((await checkin(user)).body).toMatchObject({ alreadyClaimed: true, reward: 0, eventId });
    expect(await mintsOf(eventId)).toHaveLength(0);

    platform.clock.advance(31_000);
    const responses = await Promise.all(Array.from({ length: 10 }, () => checkin(user)));
    expect(responses.every((r) => r.status === 200 && r.body.alreadyClaimed === true)).toBe(true);
    await waitForMintsSettled(platform);
    const mints = await mintsOf(eventId);
    expect(mints).toHaveLength(1);
    expect(mints[0]!.amount).toBe(10n);
    expect(await tokenBalance(platform, mints[0]!.wallet_address)).toBe(10n);
    // Paid now: later repeats leave it alone.
    platform.clock.advance(60_000);
    await checkin(user);
    expect(await mintsOf(eventId)).toHaveLength(1);
  });

  it('re-drives a milestone bonus left without its event when the milestone is claimed again', async () => {
    const user = 'crashed-claim@example.com';
    platform.clock.set('2026-08-02T10:00:00Z');
    await platform.deps.db
      .insertInto('streaks')
      .values({
        brand_id: brand.brandId,
        user_key: user,
        current: 7,
        longest: 7,
        last_activity_at: platform.clock.now(),
        last_counted_day: '2026-08-02',
        freezes: 0,
        freezes_used: 0,
        created_at: platform.clock.now(),
        updated_at: platform.clock.now(),
      })
      .execute();
    const eventId = randomUUID();
    await platform.deps.db
      .insertInto('milestone_claims')
      .values({
        brand_id: brand.brandId,
        user_key: user,
        milestone: 7,
        bonus: 100n,
        event_id: eventId,
        claimed_at: platform.clock.now(),
      })
      .execute();
    platform.clock.advance(31_000);
    const again = await claim(user, 7);
    expect(again.status).toBe(400);
    expect(again.body.details.reason).toBe('already_claimed');
    await waitForMintsSettled(platform);
    const mints = await mintsOf(eventId);
    expect(mints).toHaveLength(1);
    expect(await tokenBalance(platform, mints[0]!.wallet_address)).toBe(100n);
  });
});

describe('streak activity, status and freezes', () => {
  it('counts one day per UTC day and reports the status', async () => {
    const user = 'active@example.com';
    platform.clock.set('2026-04-01T08:00:00Z');
    const first = await activity(user);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ isNew: true, streak: { currentStreak: 1, multiplier: 1 }, streakBroken: false });
    expect((await activity(user)).body).toMatchObject({ isNew: false, streak: { currentStreak: 1 } });
    platform.clock.set('2026-04-02T19:00:00Z');
    expect((await activity(user)).body).toMatchObject({ isNew: true, streak: { currentStreak: 2 } });

    const view = await status(user);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({
      currentStreak: 2,
      longestStreak: 2,
      multiplier: 1,
      nextMilestone: { days: 7, daysRemaining: 5 },
      unclaimedMilestones: [],
      checkedInToday: false,
      lapsed: false,
      freezes: { available: 0, pending: 0, earnEveryDays: 7, max: 2 },
    });
    expect(view.body.streakExpiresAt).toBe('2026-04-04T07:00:00.000Z');

    // 36 h grace from 04-02 19:00 ends 04-04 07:00; past it without freezes the streak is lapsed.
    platform.clock.set('2026-04-04T07:00:01Z');
    expect((await status(user)).body).toMatchObject({ currentStreak: 0, longestStreak: 2, lapsed: true });
    expect((await activity(user)).body).toMatchObject({
      isNew: true,
      streakBroken: true,
      streak: { currentStreak: 1 },
    });
  });

  it('earns a freeze every 7 days and uses it for a missed day, and the status says so', async () => {
    const user = 'frozen@example.com';
    for (let day = 0; day < 7; day++) {
      platform.clock.set(new Date(Date.parse('2026-05-01T12:00:00Z') + day * DAY_MS));
      const res = await activity(user);
      if (day === 6) expect(res.body).toMatchObject({ freezeEarned: true, streak: { currentStreak: 7 } });
    }
    // Skip 05-08; on 05-09 13:00 the grace (until 05-09 00:00) is past by 13 h: one freeze bridges it.
    platform.clock.set('2026-05-09T13:00:00Z');
    expect((await status(user)).body).toMatchObject({
      currentStreak: 7,
      lapsed: false,
      freezes: { available: 0, pending: 1, usedTotal: 0 },
    });
    const res = await activity(user);
    expect(res.body).toMatchObject({ freezesConsumed: 1, streakBroken: false, streak: { currentStreak: 8 } });
    expect((await status(user)).body).toMatchObject({
      currentStreak: 8,
      freezes: { available: 0, pending: 0, usedTotal: 1, lastUsedAt: '2026-05-09T13:00:00.000Z' },
    });
  });

  it('requires a signature to read a user’s streak', async () => {
    const res = await platform.get(`/services/streak/status/${brand.brandId}/someone%40example.com`);
    expect(res.status).toBe(401);
    expect(res.body.details.reason).toBe('signature_required');
  });
});

describe('POST /services/streak/claim-milestone', () => {
  const user = 'milestones@example.com';

  beforeAll(async () => {
    for (let day = 0; day < 7; day++) {
      platform.clock.set(new Date(Date.parse('2026-06-01T09:00:00Z') + day * DAY_MS));
      await activity(user);
    }
  });

  it('lists the reached milestone as unclaimed', async () => {
    expect((await status(user)).body).toMatchObject({
      currentStreak: 7,
      unclaimedMilestones: [{ days: 7, bonus: 100 }],
      nextMilestone: { days: 30, daysRemaining: 23 },
      multiplier: 1.5,
    });
  });

  it('refuses an unreached milestone and a length that is no milestone', async () => {
    const unreached = await claim(user, 30);
    expect(unreached.status).toBe(400);
    expect(unreached.body).toMatchObject({
      code: 'CLAIM_FAILED',
      details: { reason: 'not_reached', longestStreak: 7 },
    });
    const none = await claim(user, 8);
    expect(none.status).toBe(400);
    expect(none.body.details.reason).toBe('not_a_milestone');
  });

  it('pays a milestone claimed 10 times concurrently once', async () => {
    const responses = await Promise.all(Array.from({ length: 10 }, () => claim(user, 7)));
    const ok = responses.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]!.body).toMatchObject({ success: true, bonusPts: 100, milestone: 7 });
    const refused = responses.filter((r) => r.status === 400);
    expect(refused).toHaveLength(9);
    expect(refused.every((r) => r.body.details.reason === 'already_claimed')).toBe(true);

    await waitForMintsSettled(platform);
    expect(await mintsOf(ok[0]!.body.eventId)).toHaveLength(1);
    expect(await tokenBalance(platform, ok[0]!.body.walletAddress)).toBe(100n);
    expect((await status(user)).body).toMatchObject({ unclaimedMilestones: [], claimedMilestones: [7] });
    expect((await claim(user, 7)).body.details.reason).toBe('already_claimed');
  });

  it('sends a streak.milestone webhook when a milestone is first reached', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const hooked = await platform.createBrand({ domain: 'hooked.example' });
      const set = await fetch(`${platform.url}/admin/brands/${hooked.brandId}/webhook`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${platform.deps.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url }),
      });
      expect(set.status).toBe(200);
      await signed(
        'PUT',
        `/services/streak/settings/${hooked.brandId}`,
        { milestones: [{ days: 2, bonus: 5 }] },
        hooked.securityKey,
      );
      const record = () =>
        signed(
          'POST',
          '/services/streak/record-activity',
          { brandId: hooked.brandId, userIdentifier: 'hook@example.com', platform: 'x' },
          hooked.securityKey,
        );
      platform.clock.set('2026-07-01T10:00:00Z');
      await record();
      platform.clock.set('2026-07-02T10:00:00Z');
      await record();
      // Wait for the delivery before moving the clock on: a jump past its lease would send it again
      // (deliveries are at-least-once).
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
      platform.clock.set('2026-07-03T10:00:00Z');
      await record();
      const queued = await platform.deps.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('brand_id', '=', hooked.brandId)
        .where('type', '=', 'streak.milestone')
        .execute();
      expect(queued).toHaveLength(1);
      const envelopes = receiver.received.map((r) => webhookEventSchema.parse(JSON.parse(r.body)));
      // One milestone reached, one webhook event (a redelivery would carry the same id).
      expect(new Set(envelopes.map((e) => e.id)).size).toBe(1);
      expect(envelopes[0]).toMatchObject({
        type: 'streak.milestone',
        data: {
          brandId: hooked.brandId,
          email: 'hook@example.com',
          streakType: 'daily',
          streakLength: 2,
          milestone: 2,
        },
      });
    } finally {
      await receiver.close();
    }
  });
});

describe('streak settings', () => {
  it('answers the defaults publicly and changes them with a signed PUT', async () => {
    const res = await platform.get(`/services/streak/settings/${bare.brandId}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      custom: false,
      settings: { graceHours: 36, freezeEveryDays: 7, maxFreezes: 2 },
    });
    expect(res.body.settings.milestones).toEqual([
      { days: 7, bonus: 100 },
      { days: 30, bonus: 500 },
      { days: 100, bonus: 2000 },
      { days: 365, bonus: 10000 },
    ]);

    const path = `/services/streak/settings/${bare.brandId}`;
    const unsigned = await fetch(`${platform.url}${path}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ graceHours: 48 }),
    });
    expect(unsigned.status).toBe(401);

    const bad = await signed('PUT', path, { graceHours: 12 }, bare.securityKey);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/graceHours/);
    const unsorted = await signed(
      'PUT',
      path,
      {
        milestones: [
          { days: 5, bonus: 1 },
          { days: 3, bonus: 1 },
        ],
      },
      bare.securityKey,
    );
    expect(unsorted.status).toBe(400);

    const saved = await signed(
      'PUT',
      path,
      { graceHours: 48, milestones: [{ days: 2, bonus: 20 }], freezeEveryDays: 0 },
      bare.securityKey,
    );
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      custom: true,
      settings: { graceHours: 48, milestones: [{ days: 2, bonus: 20 }], freezeEveryDays: 0, maxFreezes: 2 },
    });
    expect((await platform.get(path)).body.settings.graceHours).toBe(48);
  });
});
