import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.ts';
import { createErrorHandler } from '../http/errors.ts';
import { createLogger } from './logger.ts';
import { createMetricsRouter } from './metrics.routes.ts';
import { createMetrics } from './metrics.ts';
import { createRewardStatusSampler } from './reward-status.ts';

async function serve(app: express.Express) {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

function appWith(metrics: ReturnType<typeof createMetrics>, sampleRewards: () => Promise<Record<string, number>>) {
  const logger = createLogger({ level: 'silent' });
  const app = express();
  app.use(createMetricsRouter({ metrics, sampleRewards, logger, sampleTimeoutMs: 200 }));
  app.use(createErrorHandler(logger));
  return app;
}

describe('GET /metrics', () => {
  it('serves the Prometheus text format with reward counts sampled at scrape time', async () => {
    const metrics = createMetrics();
    let counts: Record<string, number> = { pending: 3, confirmed: 10 };
    const server = await serve(appWith(metrics, async () => counts));
    try {
      const first = await fetch(`${server.url}/metrics`);
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toBe(metrics.registry.contentType);
      const text = await first.text();
      expect(text).toContain('pts_rewards{status="pending"} 3');
      expect(text).toContain('pts_rewards{status="confirmed"} 10');
      // Statuses with no rows are reported as 0, not left out.
      expect(text).toContain('pts_rewards{status="failed"} 0');
      expect(text).toContain('# TYPE pts_http_requests_total counter');

      counts = { pending: 0, confirmed: 13 };
      const second = await (await fetch(`${server.url}/metrics`)).text();
      expect(second).toContain('pts_rewards{status="pending"} 0');
      expect(second).toContain('pts_rewards{status="confirmed"} 13');
    } finally {
      server.close();
    }
  });

  it('still serves the other metrics when sampling fails or hangs, without stale reward counts', async () => {
    const metrics = createMetrics();
    let mode: 'ok' | 'fail' | 'hang' = 'ok';
    const server = await serve(
      appWith(metrics, async () => {
        if (mode === 'fail') throw new Error('database is down');
        if (mode === 'hang') return new Promise(() => {});
        return { pending: 5 };
      }),
    );
    try {
      expect(await (await fetch(`${server.url}/metrics`)).text()).toContain('pts_rewards{status="pending"} 5');
      mode = 'fail';
      const failed = await fetch(`${server.url}/metrics`);
      expect(failed.status).toBe(200);
      const failedText = await failed.text();
      expect(failedText).not.toContain('pts_rewards{status="pending"} 5');
      expect(failedText).toContain('pts_metrics_sample_failures_total 1');
      mode = 'hang';
      const started = Date.now();
      const hung = await fetch(`${server.url}/metrics`);
      expect(hung.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(await hung.text()).toContain('pts_metrics_sample_failures_total 2');
    } finally {
      server.close();
    }
  });
});

describe('createRewardStatusSampler', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });

  it('counts reward_mints rows by status', async () => {
    const sample = createRewardStatusSampler(database.db);
    expect(await sample()).toEqual({});
    const row = (status: 'pending' | 'submitted' | 'confirmed' | 'failed') => ({
      id: randomUUID(),
      brand_id: '0x1111111111111111111111111111111111111111',
      wallet_address: '0x2222222222222222222222222222222222222222',
      amount: 10,
      status,
    });
    await database.db
      .insertInto('reward_mints')
      .values([row('pending'), row('pending'), row('confirmed'), row('failed'), row('pending')])
      .execute();
    expect(await sample()).toEqual({ pending: 3, confirmed: 1, failed: 1 });
  });
});
