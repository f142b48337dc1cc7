import { randomBytes } from 'node:crypto';
import { createManualClock, verifyWebhookSignature, WEBHOOK_SIGNATURE_HEADER, webhookEventSchema } from '@pts/shared';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import { type FakeWebhookReceiver, startWebhookReceiver } from '../../../test/fakes/webhook-receiver.ts';
import { loadConfig } from '../../config.ts';
import { createSecretBox } from '../../security/secret-box.ts';
import { createBrand } from '../brands/brands.service.ts';
import { nextAttemptAfter, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY_DELAYS_SECONDS } from './webhooks.delivery.ts';
import { enqueueWebhook, enqueueWebhooks } from './webhooks.outbox.ts';
import { findWebhookDelivery } from './webhooks.repository.ts';
import {
  createWebhookService,
  deleteWebhookEndpoint,
  setWebhookEndpoint,
  type WebhookServiceDeps,
} from './webhooks.service.ts';
import { startWebhookWorker, type WebhookWorker } from './webhooks.worker.ts';

const clock = createManualClock('2026-03-01T12:00:00Z');
const secrets = createSecretBox(randomBytes(32).toString('hex'));
const logger = pino({ level: 'silent' });
let database: TestDatabase;
const receivers: FakeWebhookReceiver[] = [];
const workers: WebhookWorker[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
});

afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop();
  for (const receiver of receivers.splice(0)) await receiver.close();
  // Each test starts with an empty queue: leftovers would be due for the next test's worker.
  await database.db.deleteFrom('webhook_deliveries').execute();
});

afterAll(async () => {
  await database?.close();
});

function config(env: Record<string, string> = {}) {
  return loadConfig({ LOG_LEVEL: 'silent', PTS_WEBHOOK_TIMEOUT_MS: '1000', ...env });
}

function serviceDeps(): WebhookServiceDeps {
  return {
    db: database.db,
    secrets,
    clock,
    policy: { allowInsecure: true, allowLoopback: true },
    timeoutMs: 1000,
  };
}

function worker(env: Record<string, string> = {}): WebhookWorker {
  const started = startWebhookWorker({
    webhooks: createWebhookService({ db: database.db, secrets, clock, config: config(env) }),
    clock,
    logger,
    secrets,
    config: config(env),
    pollIntervalMs: 0,
  });
  workers.push(started);
  return started;
}

async function receiver(respond?: Parameters<typeof startWebhookReceiver>[0]): Promise<FakeWebhookReceiver> {
  const started = await startWebhookReceiver(respond);
  receivers.push(started);
  return started;
}

/** A brand whose endpoint is the receiver; returns the brand id and the signing secret. */
async function brandWithEndpoint(url: string): Promise<{ brandId: string; secret: string }> {
  const brand = await createBrand({ db: database.db, secrets, clock }, { name: 'Hooks', domain: 'hooks.example' });
  const saved = await setWebhookEndpoint(serviceDeps(), brand.brandId, { url });
  return { brandId: brand.brandId, secret: saved.secret as string };
}

function rewardData(brandId: string) {
  return {
    event: 'pts_distributed',
    brandId,
    userId: '42',
    email: 'alice@example.com',
    walletAddress: `0x${'ab'.repeat(20)}`,
    ptsAmount: 100,
    transactionHash: `0x${'ab'.repeat(32)}`,
    timestamp: clock.now().getTime(),
  };
}

async function enqueueReward(brandId: string): Promise<string> {
  const id = await enqueueWebhook(database.db, {
    brandId,
    type: 'reward.distributed',
    data: rewardData(brandId),
    at: clock.now(),
  });
  expect(id).toBeDefined();
  return id as string;
}

describe('enqueueWebhook', () => {
  it('queues nothing for a brand without an endpoint, one pending row for a brand with one', async () => {
    const brand = await createBrand({ db: database.db, secrets, clock }, { name: 'No hooks', domain: 'a.example' });
    const none = await enqueueWebhook(database.db, {
      brandId: brand.brandId,
      type: 'reward.distributed',
      data: rewardData(brand.brandId),
      at: clock.now(),
    });
    expect(none).toBeUndefined();
    const count = await database.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('brand_id', '=', brand.brandId)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);

    const { brandId } = await brandWithEndpoint('http://127.0.0.1:9/hooks');
    const id = await enqueueReward(brandId);
    const row = await findWebhookDelivery(database.db, id);
    expect(row).toMatchObject({ brand_id: brandId, status: 'pending', attempts: 0, type: 'reward.distributed' });
    expect(row?.next_attempt_at?.getTime()).toBe(clock.now().getTime());
    const envelope = webhookEventSchema.parse(JSON.parse(row?.body ?? ''));
    expect(envelope).toMatchObject({
      id: row?.event_id,
      type: 'reward.distributed',
      created: Math.floor(clock.now().getTime() / 1000),
      data: { event: 'pts_distributed', brandId, ptsAmount: 100 },
    });
  });

  it('queues nothing while the endpoint is inactive', async () => {
    const { brandId } = await brandWithEndpoint('http://127.0.0.1:9/hooks');
    await database.db.updateTable('webhook_endpoints').set({ active: false }).where('brand_id', '=', brandId).execute();
    expect(
      await enqueueWebhook(database.db, {
        brandId,
        type: 'reward.distributed',
        data: rewardData(brandId),
        at: clock.now(),
      }),
    ).toBeUndefined();
  });

  it('queues a batch in input order, skipping brands without an endpoint', async () => {
    const withHook = await brandWithEndpoint('http://127.0.0.1:9/hooks');
    const without = await createBrand({ db: database.db, secrets, clock }, { name: 'Quiet', domain: 'q.example' });
    const at = clock.now();
    const ids = await enqueueWebhooks(database.db, [
      { brandId: withHook.brandId, type: 'reward.distributed', data: rewardData(withHook.brandId), at },
      { brandId: without.brandId, type: 'reward.distributed', data: rewardData(without.brandId), at },
      {
        brandId: withHook.brandId.toUpperCase().replace('0X', '0x'),
        type: 'reward.distributed',
        data: rewardData(withHook.brandId),
        at,
      },
    ]);
    expect(ids[1]).toBeUndefined();
    const rows = await Promise.all([ids[0], ids[2]].map((id) => findWebhookDelivery(database.db, id as string)));
    expect(rows.map((row) => row?.brand_id)).toEqual([withHook.brandId, withHook.brandId]);
    expect(rows[0]?.event_id).not.toBe(rows[1]?.event_id);
    expect(await enqueueWebhooks(database.db, [])).toEqual([]);
  });

  it('rejects data that does not match the type schema', async () => {
    const { brandId } = await brandWithEndpoint('http://127.0.0.1:9/hooks');
    await expect(
      enqueueWebhook(database.db, { brandId, type: 'reward.distributed', data: { brandId }, at: clock.now() }),
    ).rejects.toThrow(/does not match its schema/);
  });

  it('leaves no delivery behind when the enqueuing transaction rolls back', async () => {
    const { brandId } = await brandWithEndpoint('http://127.0.0.1:9/hooks');
    let queued: string | undefined;
    await expect(
      database.db.transaction().execute(async (trx) => {
        queued = await enqueueWebhook(trx, {
          brandId,
          type: 'reward.distributed',
          data: rewardData(brandId),
          at: clock.now(),
        });
        throw new Error('the event failed after enqueuing');
      }),
    ).rejects.toThrow('the event failed');
    expect(queued).toBeDefined();
    expect(await findWebhookDelivery(database.db, queued as string)).toBeUndefined();
    expect(await worker().runOnce()).toMatchObject({ claimed: 0 });
  });
});

describe('webhook worker', () => {
  it('delivers a signed envelope that verifies with the shared function', async () => {
    const hook = await receiver();
    const { brandId, secret } = await brandWithEndpoint(hook.url);
    const id = await enqueueReward(brandId);
    expect(await worker().runOnce()).toEqual({ claimed: 1, delivered: 1, failed: 0, dead: 0 });

    expect(hook.received).toHaveLength(1);
    const [request] = hook.received;
    const header = request?.headers[WEBHOOK_SIGNATURE_HEADER] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const now = Math.floor(clock.now().getTime() / 1000);
    expect(verifyWebhookSignature({ secret, body: request?.body ?? '', header, now })).toEqual({
      ok: true,
      timestamp: now,
    });
    expect(verifyWebhookSignature({ secret: 'whsec_other', body: request?.body ?? '', header, now }).ok).toBe(false);
    const envelope = webhookEventSchema.parse(JSON.parse(request?.body ?? ''));
    expect(envelope.type).toBe('reward.distributed');
    expect(request?.headers['content-type']).toBe('application/json');

    const row = await findWebhookDelivery(database.db, id);
    expect(row).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200, next_attempt_at: null });
    expect(row?.event_id).toBe(envelope.id);
    expect(await worker().runOnce()).toMatchObject({ claimed: 0 });
  });

  it('retries after 500s with back-off on the injected clock, same event id each time', async () => {
    let answers = [500, 503];
    const hook = await receiver(() => ({ status: answers.shift() ?? 200, body: 'try later' }));
    const { brandId } = await brandWithEndpoint(hook.url);
    const id = await enqueueReward(brandId);
    const run = worker();

    expect(await run.runOnce()).toMatchObject({ claimed: 1, failed: 1 });
    let row = await findWebhookDelivery(database.db, id);
    expect(row).toMatchObject({ status: 'failed', attempts: 1, last_status_code: 500 });
    expect(row?.last_error).toContain('receiver answered 500: try later');
    expect(row?.next_attempt_at?.getTime()).toBe(clock.now().getTime() + 30_000);

    // Not due yet: nothing is sent until the clock reaches the back-off.
    clock.advance(29_000);
    expect(await run.runOnce()).toMatchObject({ claimed: 0 });
    clock.advance(1_000);
    expect(await run.runOnce()).toMatchObject({ claimed: 1, failed: 1 });
    row = await findWebhookDelivery(database.db, id);
    expect(row).toMatchObject({ status: 'failed', attempts: 2, last_status_code: 503 });
    expect(row?.next_attempt_at?.getTime()).toBe(clock.now().getTime() + 120_000);

    clock.advance(120_000);
    expect(await run.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect(await findWebhookDelivery(database.db, id)).toMatchObject({ status: 'delivered', attempts: 3 });
    const ids = hook.received.map((request) => JSON.parse(request.body).id);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(1);
    answers = [];
  });

  it('declares a delivery dead after the last try, then a replay re-queues and delivers it', async () => {
    let status = 500;
    const hook = await receiver(() => ({ status }));
    const { brandId } = await brandWithEndpoint(hook.url);
    const id = await enqueueReward(brandId);
    const run = worker();
    for (let attempt = 1; attempt <= WEBHOOK_MAX_ATTEMPTS; attempt += 1) {
      const result = await run.runOnce();
      expect(result, `attempt ${attempt}`).toMatchObject({ claimed: 1 });
      const row = await findWebhookDelivery(database.db, id);
      if (attempt < WEBHOOK_MAX_ATTEMPTS) {
        expect(row).toMatchObject({ status: 'failed', attempts: attempt });
        clock.set(row?.next_attempt_at as Date);
      } else {
        expect(row).toMatchObject({ status: 'dead', attempts: WEBHOOK_MAX_ATTEMPTS, next_attempt_at: null });
      }
    }
    expect(hook.received).toHaveLength(WEBHOOK_MAX_ATTEMPTS);
    clock.advance(7 * 24 * 3600_000);
    expect(await run.runOnce()).toMatchObject({ claimed: 0 });

    status = 200;
    const { replayWebhookDelivery } = await import('./webhooks.service.ts');
    const replayed = await replayWebhookDelivery(serviceDeps(), id);
    expect(replayed).toMatchObject({ id, status: 'pending', attempts: 0 });
    expect(await run.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect(await findWebhookDelivery(database.db, id)).toMatchObject({ status: 'delivered', attempts: 1 });
    const eventIds = new Set(hook.received.map((request) => JSON.parse(request.body).id));
    expect(eventIds.size).toBe(1);
  });

  it('a slow receiver times out without holding up deliveries to others', async () => {
    const slow = await receiver(() => ({ status: 200, delayMs: 5_000 }));
    const fast = await receiver();
    const slowBrand = await brandWithEndpoint(slow.url);
    const fastBrand = await brandWithEndpoint(fast.url);
    const slowId = await enqueueReward(slowBrand.brandId);
    const fastId = await enqueueReward(fastBrand.brandId);

    // The event path only inserts a row: enqueuing while the receiver hangs stays fast.
    const started = performance.now();
    await enqueueReward(fastBrand.brandId);
    expect(performance.now() - started).toBeLessThan(2_000);

    const run = worker({ PTS_WEBHOOK_TIMEOUT_MS: '300' });
    const t0 = performance.now();
    const result = await run.runOnce();
    // Without the timeout this would take the receiver's 5 s.
    expect(performance.now() - t0).toBeLessThan(4_000);
    expect(result).toMatchObject({ claimed: 3, delivered: 2, failed: 1 });
    expect(await findWebhookDelivery(database.db, fastId)).toMatchObject({ status: 'delivered' });
    const timedOut = await findWebhookDelivery(database.db, slowId);
    expect(timedOut).toMatchObject({ status: 'failed', attempts: 1, last_status_code: null });
    expect(timedOut?.last_error).toContain('no complete answer within 300 ms');
  });

  it('sends at most PTS_WEBHOOK_CONCURRENCY requests at once', async () => {
    const hook = await receiver(() => ({ status: 200, delayMs: 100 }));
    const { brandId } = await brandWithEndpoint(hook.url);
    for (let i = 0; i < 5; i += 1) await enqueueReward(brandId);
    const result = await worker({ PTS_WEBHOOK_CONCURRENCY: '2' }).runOnce();
    expect(result).toMatchObject({ claimed: 5, delivered: 5 });
    expect(hook.maxInFlight).toBe(2);
  });

  it('refuses plain http targets when insecure targets are not allowed, without contacting them', async () => {
    const hook = await receiver();
    const { brandId } = await brandWithEndpoint(hook.url);
    const id = await enqueueReward(brandId);
    const result = await worker({ PTS_WEBHOOKS_ALLOW_INSECURE: 'false' }).runOnce();
    expect(result).toMatchObject({ claimed: 1, failed: 1 });
    expect(hook.received).toHaveLength(0);
    const row = await findWebhookDelivery(database.db, id);
    expect(row?.last_error).toMatch(/refused target: .*must use https/);
  });

  it('ends queued deliveries as dead when the endpoint was deleted, without sending', async () => {
    const hook = await receiver();
    const { brandId } = await brandWithEndpoint(hook.url);
    const id = await enqueueReward(brandId);
    await deleteWebhookEndpoint(serviceDeps(), brandId);
    expect(await worker().runOnce()).toMatchObject({ claimed: 1, dead: 1 });
    expect(hook.received).toHaveLength(0);
    expect(await findWebhookDelivery(database.db, id)).toMatchObject({
      status: 'dead',
      last_error: 'the brand has no active webhook endpoint',
    });
  });

  it('takes over a delivery whose worker died mid-send once the lease has expired', async () => {
    const hook = await receiver();
    const { brandId } = await brandWithEndpoint(hook.url);
    const id = await enqueueReward(brandId);
    const leaseUntil = new Date(clock.now().getTime() + 5_000);
    await database.db
      .updateTable('webhook_deliveries')
      .set({ status: 'sending', attempts: 1, next_attempt_at: leaseUntil })
      .where('id', '=', id)
      .execute();
    const run = worker();
    expect(await run.runOnce()).toMatchObject({ claimed: 0 });
    clock.set(leaseUntil);
    expect(await run.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect(await findWebhookDelivery(database.db, id)).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('delivers in the background when polling is on', async () => {
    const hook = await receiver();
    const { brandId } = await brandWithEndpoint(hook.url);
    const id = await enqueueReward(brandId);
    const started = startWebhookWorker({
      webhooks: createWebhookService({ db: database.db, secrets, clock, config: config() }),
      clock,
      logger,
      secrets,
      config: config(),
      pollIntervalMs: 20,
    });
    workers.push(started);
    await expect
      .poll(async () => (await findWebhookDelivery(database.db, id))?.status, { timeout: 5_000 })
      .toBe('delivered');
    expect(hook.received).toHaveLength(1);
  });
});

describe('retry schedule', () => {
  it('spans at least 24 hours from the first try to the last, growing, then stops', () => {
    const total = WEBHOOK_RETRY_DELAYS_SECONDS.reduce((sum, delay) => sum + delay, 0);
    expect(total).toBeGreaterThanOrEqual(24 * 3600);
    expect(WEBHOOK_RETRY_DELAYS_SECONDS.slice(0, 4)).toEqual([30, 120, 600, 1800]);
    const now = new Date('2026-01-01T00:00:00Z');
    expect(nextAttemptAfter(1, now)?.getTime()).toBe(now.getTime() + 30_000);
    expect(nextAttemptAfter(WEBHOOK_MAX_ATTEMPTS - 1, now)?.getTime()).toBe(now.getTime() + 8 * 3600_000);
    expect(nextAttemptAfter(WEBHOOK_MAX_ATTEMPTS, now)).toBeUndefined();
  });
});
