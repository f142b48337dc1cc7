import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createManualClock, verifyWebhookSignature, WEBHOOK_SIGNATURE_HEADER } from '@pts/shared';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import { type FakeWebhookReceiver, startWebhookReceiver } from '../../../test/fakes/webhook-receiver.ts';
import { runCli } from '../../cli/run-cli.ts';
import { loadConfig } from '../../config.ts';
import { createErrorHandler, notFoundHandler } from '../../http/errors.ts';
import { routerFrom } from '../../http/route-table.ts';
import type { HostResolver } from '../../http/ssrf-guard.ts';
import { createSecretBox } from '../../security/secret-box.ts';
import { createBrandAdminService } from '../brands/brand-admin.service.ts';
import { brandAdminRoutes } from '../brands/brands.routes.ts';
import { createBrand } from '../brands/brands.service.ts';
import { enqueueWebhook } from './webhooks.outbox.ts';
import { webhookAdminRoutes } from './webhooks.routes.ts';
import { createWebhookService } from './webhooks.service.ts';

const ADMIN_TOKEN = 'webhook-test-admin-token-0123456789';
const clock = createManualClock(new Date());
const secrets = createSecretBox(randomBytes(32).toString('hex'));
const resolve: HostResolver = async (hostname) => {
  const table: Record<string, string> = { 'hooks.public.example': '93.184.216.34', 'internal.example': '10.0.0.7' };
  const address = table[hostname];
  if (!address) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return [{ address, family: 4 }];
};

let database: TestDatabase;
let receiver: FakeWebhookReceiver;
const servers: Server[] = [];
let localUrl: string;
let strictUrl: string;

async function serve(env: Record<string, string>): Promise<string> {
  const app = express();
  app.use(express.json());
  const config = loadConfig({ LOG_LEVEL: 'silent', PTS_WEBHOOK_TIMEOUT_MS: '1000', ...env });
  const deps = { db: database.db, secrets, clock, config, adminToken: ADMIN_TOKEN };
  app.use('/admin', routerFrom(brandAdminRoutes({ brands: createBrandAdminService(deps), adminToken: ADMIN_TOKEN })));
  const webhooks = createWebhookService({ ...deps, resolve });
  app.use('/admin', routerFrom(webhookAdminRoutes({ webhooks, adminToken: ADMIN_TOKEN })));
  app.use(notFoundHandler);
  app.use(createErrorHandler(pino({ level: 'silent' })));
  const server = await new Promise<Server>((done) => {
    const listening = app.listen(0, '127.0.0.1', () => done(listening));
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  database = await createTestDatabase();
  receiver = await startWebhookReceiver(() => ({ status: 200 }));
  localUrl = await serve({ PTS_CHAIN: 'local' });
  strictUrl = await serve({ PTS_CHAIN: 'rpc' });
});

afterAll(async () => {
  await receiver?.close();
  for (const server of servers) {
    await new Promise<void>((done) => {
      server.close(() => done());
      server.closeAllConnections();
    });
  }
  await database?.close();
});

async function request(base: string, method: string, path: string, body?: unknown, token: string | null = ADMIN_TOKEN) {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}/admin${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: assertions read arbitrary response fields
  return { status: response.status, body: (await response.json()) as any };
}

async function pts(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { PTS_URL: localUrl, PTS_ADMIN_TOKEN: ADMIN_TOKEN },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

async function newBrand(): Promise<string> {
  return (await createBrand({ db: database.db, secrets, clock }, { name: 'Acme', domain: 'acme.example' })).brandId;
}

describe('webhook admin routes', () => {
  it('requires the admin token', async () => {
    const brandId = await newBrand();
    for (const [method, path] of [
      ['PUT', `/brands/${brandId}/webhook`],
      ['GET', `/brands/${brandId}/webhook`],
      ['DELETE', `/brands/${brandId}/webhook`],
      ['POST', `/brands/${brandId}/webhook/test`],
      ['GET', `/brands/${brandId}/webhook/deliveries`],
      ['POST', `/webhook-deliveries/${crypto.randomUUID()}/replay`],
    ] as const) {
      const reply = await request(localUrl, method, path, method === 'PUT' ? { url: receiver.url } : undefined, null);
      expect(reply.status, `${method} ${path}`).toBe(401);
    }
  });

  it('returns the secret once: on creation and on rotation, never on reads or plain updates', async () => {
    const brandId = await newBrand();
    const created = await request(localUrl, 'PUT', `/brands/${brandId}/webhook`, { url: receiver.url });
    expect(created.status).toBe(200);
    expect(created.body.webhook).toMatchObject({ brandId, url: receiver.url, active: true });
    expect(created.body.webhook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);

    const read = await request(localUrl, 'GET', `/brands/${brandId}/webhook`);
    expect(read.body.webhook).toMatchObject({ brandId, url: receiver.url });
    expect(read.body.webhook).not.toHaveProperty('secret');
    expect(JSON.stringify(read.body)).not.toContain(created.body.webhook.secret);

    const moved = await request(localUrl, 'PUT', `/brands/${brandId}/webhook`, { url: `${receiver.url}/v2` });
    expect(moved.body.webhook).toMatchObject({ url: `${receiver.url}/v2` });
    expect(moved.body.webhook).not.toHaveProperty('secret');

    const rotated = await request(localUrl, 'PUT', `/brands/${brandId}/webhook`, {
      url: receiver.url,
      rotateSecret: true,
    });
    expect(rotated.body.webhook.secret).toMatch(/^whsec_/);
    expect(rotated.body.webhook.secret).not.toBe(created.body.webhook.secret);
    const stored = await database.db
      .selectFrom('webhook_endpoints')
      .select('secret_encrypted')
      .where('brand_id', '=', brandId)
      .executeTakeFirstOrThrow();
    expect(stored.secret_encrypted).not.toContain(rotated.body.webhook.secret);
    expect(secrets.decrypt(stored.secret_encrypted)).toBe(rotated.body.webhook.secret);
  });

  it('refuses internal or plain-http URLs outside local mode, and bad URLs everywhere', async () => {
    const brandId = await newBrand();
    const cases: [string, string, RegExp][] = [
      [strictUrl, 'http://hooks.public.example/x', /must use https/],
      [strictUrl, 'https://internal.example/x', /10\.0\.0\.7, a private/],
      [strictUrl, 'https://169.254.169.254/latest', /link-local/],
      [strictUrl, receiver.url.replace('http:', 'https:'), /loopback/],
      [localUrl, 'https://internal.example/x', /private/],
      [localUrl, 'not a url', /must be an http\(s\) URL/],
    ];
    for (const [base, url, message] of cases) {
      const reply = await request(base, 'PUT', `/brands/${brandId}/webhook`, { url });
      expect(reply.status, url).toBe(400);
      expect(reply.body.error, url).toMatch(message);
    }
    const ok = await request(strictUrl, 'PUT', `/brands/${brandId}/webhook`, { url: 'https://hooks.public.example/x' });
    expect(ok.status).toBe(200);
  });

  it('answers 404 for unknown brands and brands without an endpoint; DELETE removes the endpoint', async () => {
    const unknown = `0x${randomBytes(20).toString('hex')}`;
    expect((await request(localUrl, 'PUT', `/brands/${unknown}/webhook`, { url: receiver.url })).status).toBe(404);
    const brandId = await newBrand();
    expect((await request(localUrl, 'GET', `/brands/${brandId}/webhook`)).status).toBe(404);
    expect((await request(localUrl, 'POST', `/brands/${brandId}/webhook/test`)).status).toBe(404);
    await request(localUrl, 'PUT', `/brands/${brandId}/webhook`, { url: receiver.url });
    expect((await request(localUrl, 'DELETE', `/brands/${brandId}/webhook`)).body).toEqual({ success: true });
    expect((await request(localUrl, 'GET', `/brands/${brandId}/webhook`)).status).toBe(404);
    expect((await request(localUrl, 'DELETE', `/brands/${brandId}/webhook`)).status).toBe(404);
  });
});

describe('pts webhook', () => {
  it('set --json prints the secret once; test reports the receiver status; deliveries lists; replay re-queues', async () => {
    const brandId = await newBrand();
    const set = await pts(['webhook', 'set', '--brand', brandId, '--url', receiver.url, '--json']);
    expect(set).toMatchObject({ code: 0, stderr: '' });
    const saved = JSON.parse(set.stdout);
    expect(saved).toMatchObject({ brandId, url: receiver.url, secret: expect.stringMatching(/^whsec_/) });

    const before = receiver.received.length;
    const test = await pts(['webhook', 'test', '--brand', brandId, '--json']);
    expect(test.code, test.stderr).toBe(0);
    const result = JSON.parse(test.stdout);
    expect(result).toMatchObject({ delivered: true, statusCode: 200, error: null });
    expect(result.delivery).toMatchObject({ type: 'webhook.test', status: 'delivered', attempts: 1 });
    const sent = receiver.received[before];
    expect(JSON.parse(sent?.body ?? '')).toMatchObject({ type: 'webhook.test', data: { brandId } });
    expect(
      verifyWebhookSignature({
        secret: saved.secret,
        body: sent?.body ?? '',
        header: sent?.headers[WEBHOOK_SIGNATURE_HEADER] as string,
        now: Math.floor(clock.now().getTime() / 1000),
      }).ok,
    ).toBe(true);

    receiver.respond = () => ({ status: 500 });
    const failing = await pts(['webhook', 'test', '--brand', brandId]);
    receiver.respond = () => ({ status: 200 });
    expect(failing.code).toBe(0);
    expect(failing.stdout).toContain('Not delivered: HTTP 500');

    const queued = await enqueueWebhook(database.db, {
      brandId,
      type: 'webhook.test',
      data: { brandId, message: 'queued', timestamp: clock.now().getTime() },
      at: clock.now(),
    });
    const all = JSON.parse((await pts(['webhook', 'deliveries', '--brand', brandId, '--json'])).stdout);
    expect(all.deliveries).toHaveLength(3);
    const dead = JSON.parse(
      (await pts(['webhook', 'deliveries', '--brand', brandId, '--status', 'dead', '--json'])).stdout,
    );
    expect(dead.deliveries).toHaveLength(1);
    expect(dead.deliveries[0]).toMatchObject({ status: 'dead', lastStatusCode: 500 });
    const pending = JSON.parse(
      (await pts(['webhook', 'deliveries', '--brand', brandId, '--status', 'pending', '--json'])).stdout,
    );
    expect(pending.deliveries.map((delivery: { id: string }) => delivery.id)).toEqual([queued]);
    const table = await pts(['webhook', 'deliveries', '--brand', brandId]);
    expect(table.stdout).toMatch(/^DELIVERY ID\s+TYPE\s+STATUS/);

    const replay = await pts(['webhook', 'replay', '--delivery', dead.deliveries[0].id, '--json']);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ id: dead.deliveries[0].id, status: 'pending', attempts: 0 });
  });

  it('validates flags locally and reports unknown deliveries', async () => {
    const brandId = await newBrand();
    const badStatus = await pts(['webhook', 'deliveries', '--brand', brandId, '--status', 'lost']);
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toContain('--status must be one of');
    expect((await pts(['webhook', 'set', '--brand', brandId])).stderr).toContain('--url is required');
    const missing = await pts(['webhook', 'replay', '--delivery', crypto.randomUUID()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('[NOT_FOUND]');
    const help = await pts(['help']);
    expect(help.stdout).toContain('pts webhook set --brand ID --url URL');
  });
});
