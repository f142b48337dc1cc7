import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { AppError } from '@pts/shared';
import express, { Router } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createErrorHandler, notFoundHandler } from '../http/errors.ts';
import { createHttpMetricsMiddleware, UNMATCHED_ROUTE } from './http-metrics.ts';
import { createLogger } from './logger.ts';
import { createMetrics } from './metrics.ts';

const SECRET = 'Bearer top-secret-admin-token-123456';

describe('http metrics middleware', () => {
  const metrics = createMetrics();
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: new Writable({
      write(chunk, _encoding, callback) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        callback();
      },
    }),
  });
  let baseUrl = '';
  let close: () => void = () => {};

  beforeAll(async () => {
    const app = express();
    app.use(createHttpMetricsMiddleware({ metrics, logger }));
    app.use(express.json());
    app.post('/pts-api/manual-event', (_req, res) => {
      res.json({ success: true });
    });
    const admin = Router();
    admin.get('/brands/:brandId', (req) => {
      throw new AppError('BRAND_NOT_FOUND', `Brand ${req.params.brandId} is not registered`);
    });
    admin.get('/', (_req, res) => {
      res.json({ admin: true });
    });
    app.use('/admin', admin);
    const rules = Router();
    rules.get('/:ruleId', async (_req, res) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      res.json({ ok: true });
    });
    app.use('/brands/:brandId/rules', rules);
    app.use(notFoundHandler);
    app.use(createErrorHandler(logger));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  async function series() {
    return (await metrics.httpRequests.get()).values.map((value) => ({
      ...value.labels,
      count: value.value,
    }));
  }

  it('labels requests with the route template, not the raw path, even when an error handler answers', async () => {
    for (const id of ['0x1111111111111111111111111111111111111111', '0x2222222222222222222222222222222222222222']) {
      const response = await fetch(`${baseUrl}/admin/brands/${id}`);
      expect(response.status).toBe(404);
    }
    expect(await series()).toContainEqual({
      method: 'GET',
      route: '/admin/brands/:brandId',
      status: '404',
      count: 2,
    });
    expect((await series()).some((s) => String(s.route).includes('0x1111'))).toBe(false);
  });

  it('records a mounted router root as its mount path and replaces id values in mount paths', async () => {
    await fetch(`${baseUrl}/admin`);
    await fetch(`${baseUrl}/brands/0x3333333333333333333333333333333333333333/rules/custom_a`);
    await fetch(`${baseUrl}/brands/0x4444444444444444444444444444444444444444/rules/custom_b`);
    const all = await series();
    expect(all).toContainEqual({ method: 'GET', route: '/admin', status: '200', count: 1 });
    expect(all).toContainEqual({
      method: 'GET',
      route: '/brands/:id/rules/:ruleId',
      status: '200',
      count: 2,
    });
  });

  it('puts every unmatched path under one label', async () => {
    await fetch(`${baseUrl}/nope/${Math.random()}`);
    await fetch(`${baseUrl}/other/${Math.random()}`);
    expect(await series()).toContainEqual({ method: 'GET', route: UNMATCHED_ROUTE, status: '404', count: 2 });
  });

  it('observes the duration histogram under the same labels', async () => {
    const histogram = await metrics.httpDuration.get();
    const count = histogram.values.find(
      (value) =>
        value.metricName === 'pts_http_request_duration_seconds_count' &&
        value.labels.route === '/brands/:id/rules/:ruleId',
    );
    expect(count?.value).toBe(2);
    const sum = histogram.values.find(
      (value) =>
        value.metricName === 'pts_http_request_duration_seconds_sum' &&
        value.labels.route === '/brands/:id/rules/:ruleId',
    );
    expect(sum?.value).toBeGreaterThanOrEqual(0.009);
  });

  it('logs one line per request at debug below 400 and info from 400, without bodies or auth headers', async () => {
    lines.length = 0;
    const ok = await fetch(`${baseUrl}/pts-api/manual-event`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: SECRET },
      body: JSON.stringify({ userEmail: 'private@example.com', securityKey: 'pts_sk_hidden' }),
    });
    expect(ok.status).toBe(200);
    await fetch(`${baseUrl}/admin/brands/0x5555555555555555555555555555555555555555?token=abc`, {
      headers: { authorization: SECRET },
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const requestLines = lines.filter((line) => line.msg === 'request');
    expect(requestLines).toHaveLength(2);
    expect(requestLines[0]).toMatchObject({
      level: 'debug',
      method: 'POST',
      route: '/pts-api/manual-event',
      status: 200,
    });
    expect(requestLines[1]).toMatchObject({
      level: 'info',
      method: 'GET',
      route: '/admin/brands/:brandId',
      status: 404,
    });
    expect(typeof requestLines[0]?.durationMs).toBe('number');
    const text = JSON.stringify(lines);
    for (const leaked of ['top-secret', 'private@example.com', 'pts_sk_hidden', 'token=abc']) {
      expect(text).not.toContain(leaked);
    }
  });
});
