import { verifyWebhookSignature, WEBHOOK_SIGNATURE_HEADER, webhookEventSchema } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeWebhookReceiver, startWebhookReceiver } from '../../../test/fakes/webhook-receiver.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';

// Needs the wiring of docs/webhooks.md: the admin router mounted under /admin, the worker started with the
// `worker` role, and `reward.distributed` enqueued when the reward's mint is confirmed.
let platform: TestPlatform;
let receiver: FakeWebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  platform = await startTestPlatform({ PTS_WEBHOOK_POLL_MS: '50' });
});

afterAll(async () => {
  await platform?.stop();
  await receiver?.close();
});

describe('webhooks on the whole platform', () => {
  it('a rewarded event reaches the brand endpoint as a signed reward.distributed with the spec §6 fields', async () => {
    const brand = await platform.createBrand({
      rules: [{ eventType: 'first_purchase', rewardAmount: 250, cooldownHours: 0 }],
    });
    const set = await fetch(`${platform.url}/admin/brands/${brand.brandId}/webhook`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${platform.deps.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(set.status).toBe(200);
    const { webhook } = (await set.json()) as { webhook: { secret: string } };

    const event = await platform.post('/pts-api/manual-event', {
      brandId: brand.brandId,
      eventType: 'first_purchase',
      userEmail: 'Hook.User@Example.com',
      domain: 'shop.example.com',
    });
    expect(event.status, JSON.stringify(event.body)).toBe(200);

    // The same confirmation also unlocks achievements (`achievement.unlocked`); this test is about the reward.
    const rewardNotices = () =>
      receiver.received.filter((r) => JSON.parse(r.body ?? '{}').type === 'reward.distributed');
    await expect.poll(() => rewardNotices().length, { timeout: 10_000 }).toBe(1);
    const [request] = rewardNotices();
    const now = Math.floor(platform.clock.now().getTime() / 1000);
    const header = request?.headers[WEBHOOK_SIGNATURE_HEADER] as string;
    expect(verifyWebhookSignature({ secret: webhook.secret, body: request?.body ?? '', header, now }).ok).toBe(true);
    const envelope = webhookEventSchema.parse(JSON.parse(request?.body ?? ''));
    expect(envelope).toMatchObject({
      type: 'reward.distributed',
      data: {
        event: 'pts_distributed',
        brandId: brand.brandId,
        userId: expect.stringMatching(/^\d+$/),
        email: 'hook.user@example.com',
        walletAddress: event.body.walletAddress,
        ptsAmount: 250,
        confirmedBy: 'receipt',
        timestamp: platform.clock.now().getTime(),
      },
    });
    // Sent once the mint is confirmed: it carries the hash of the transaction that minted the reward.
    expect((envelope.data as { transactionHash: string }).transactionHash).toBe(event.body.transactionHash);

    // The worker records the result just after the receiver answered.
    const listDeliveries = async () => {
      const reply = await fetch(`${platform.url}/admin/brands/${brand.brandId}/webhook/deliveries`, {
        headers: { authorization: `Bearer ${platform.deps.adminToken}` },
      });
      const { deliveries } = (await reply.json()) as {
        deliveries: { status: string; eventId: string; type: string }[];
      };
      return deliveries.filter((delivery) => delivery.type === 'reward.distributed');
    };
    await expect
      .poll(listDeliveries, { timeout: 5_000 })
      .toEqual([expect.objectContaining({ status: 'delivered', eventId: envelope.id })]);
  });

  it('a rejected event queues nothing', async () => {
    const brand = await platform.createBrand();
    const set = await fetch(`${platform.url}/admin/brands/${brand.brandId}/webhook`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${platform.deps.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(set.status).toBe(200);
    const rejected = await platform.post('/pts-api/manual-event', {
      brandId: brand.brandId,
      eventType: 'not_configured',
      userEmail: 'nobody@example.com',
      domain: 'shop.example.com',
    });
    expect(rejected.status).toBe(400);
    const rows = await platform.deps.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('brand_id', '=', brand.brandId)
      .execute();
    expect(rows).toEqual([]);
  });
});
