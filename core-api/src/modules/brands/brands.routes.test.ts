import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createdBrandSchema, createManualClock, ruleSchema } from '@pts/shared';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import { createErrorHandler, notFoundHandler } from '../../http/errors.ts';
import { routerFrom } from '../../http/route-table.ts';
import { createSecretBox, hashSecret } from '../../security/secret-box.ts';
import { createBrandAdminService } from './brand-admin.service.ts';
import { type BrandChange, createChangeNotifier } from './brand-changes.ts';
import { verifySecurityKey } from './brand-keys.service.ts';
import { findRuleByEventType, listAllBrandDomains, listRules, toRule } from './brands.repository.ts';
import { brandAdminRoutes } from './brands.routes.ts';
import { type BrandServiceDeps, createBrand, seedDefaultRules, setRule } from './brands.service.ts';

const ADMIN_TOKEN = 'test-admin-token-0123456789';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let database: TestDatabase;
let server: Server;
let baseUrl: string;
let deps: BrandServiceDeps;
const changes: BrandChange[] = [];
const clock = createManualClock('2026-03-01T12:00:00Z');
const secrets = createSecretBox(randomBytes(32).toString('hex'));

beforeAll(async () => {
  database = await createTestDatabase();
  const notifier = createChangeNotifier();
  notifier.subscribe((change) => changes.push(change));
  deps = { db: database.db, secrets, clock, changes: notifier };
  const app = express();
  app.use(express.json());
  app.use('/admin', routerFrom(brandAdminRoutes({ brands: createBrandAdminService(deps), adminToken: ADMIN_TOKEN })));
  app.use(notFoundHandler);
  app.use(createErrorHandler(pino({ level: 'silent' })));
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await database?.close();
});

interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: assertions read arbitrary response fields
  body: any;
}

async function request(
  method: string,
  path: string,
  body?: unknown,
  token: string | null = ADMIN_TOKEN,
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${baseUrl}/admin${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

function randomAddress(): string {
  return `0x${randomBytes(20).toString('hex')}`;
}

async function createTestBrand(overrides: Record<string, unknown> = {}) {
  const reply = await request('POST', '/brands', { name: 'Acme', domain: 'acme.example', ...overrides });
  expect(reply.status).toBe(201);
  return createdBrandSchema.parse(reply.body.brand);
}

describe('admin authentication', () => {
  it('answers 401 without a bearer token and says where the token is', async () => {
    const reply = await request('GET', '/brands', undefined, null);
    expect(reply.status).toBe(401);
    expect(reply.body).toMatchObject({ success: false, code: 'UNAUTHORIZED' });
    expect(reply.body.error).toContain('admin-token');
    expect(reply.body.error).toContain('PTS_ADMIN_TOKEN');
  });

  it('answers 401 with a wrong token, including one that only shares a prefix', async () => {
    for (const token of ['wrong', `${ADMIN_TOKEN}x`, ADMIN_TOKEN.slice(0, -1)]) {
      const reply = await request('GET', '/brands', undefined, token);
      expect(reply.status).toBe(401);
      expect(reply.body.error).toMatch(/does not match/);
    }
  });

  it('guards writes too: no brand is created without the token', async () => {
    const address = randomAddress();
    const reply = await request('POST', '/brands', { name: 'X', domain: 'x.example', address }, null);
    expect(reply.status).toBe(401);
    expect(await findBrand(address)).toBeUndefined();
  });
});

describe('POST /admin/brands', () => {
  it('creates a brand with a derived lowercase address, both keys and the default rules', async () => {
    const brand = await createTestBrand();
    expect(brand.brandId).toMatch(/^0x[0-9a-f]{40}$/);
    expect(brand.securityKey).toMatch(/^pts_sk_[A-Za-z0-9_-]{43}$/);
    expect(brand.apiKey).toMatch(/^pts_ak_[A-Za-z0-9_-]{43}$/);
    expect(brand).toMatchObject({
      name: 'Acme',
      domain: 'acme.example',
      verifiedDomains: [],
      automation: true,
      tier: 'basic',
      createdAt: '2026-03-01T12:00:00.000Z',
    });
    const rules = await request('GET', `/brands/${brand.brandId}/rules`);
    const rewards = Object.fromEntries(
      rules.body.rules.map((rule: { eventType: string; rewardAmount: number }) => [rule.eventType, rule.rewardAmount]),
    );
    expect(rewards).toEqual({
      account_creation: 100,
      complete_survey: 75,
      newsletter_subscribe: 25,
      rate_experience: 50,
      subscribe_renewal: 200,
      form_submit: 10,
    });
    // The spec 2.4 defaults are not custom: uuid ids.
    for (const rule of rules.body.rules)
      expect(rule).toMatchObject({ eventId: expect.stringMatching(UUID), isCustom: false });
  });

  it('uses a given address, lowercased, and derives a different address each time otherwise', async () => {
    const address = randomAddress();
    const given = await createTestBrand({ address: address.replace(/[a-f]/g, (c) => c.toUpperCase()) });
    expect(given.brandId).toBe(address);
    const [first, second] = [await createTestBrand(), await createTestBrand()];
    expect(first.brandId).not.toBe(second.brandId);
  });

  it('stores the security key hashed and encrypted and the API key hashed, never in plaintext', async () => {
    const brand = await createTestBrand({ address: randomAddress() });
    const row = await findBrand(brand.brandId);
    expect(row?.security_key_hash).toBe(hashSecret(brand.securityKey));
    expect(row?.api_key_hash).toBe(hashSecret(brand.apiKey));
    expect(secrets.decrypt(row?.security_key_encrypted ?? '')).toBe(brand.securityKey);
    const stored = JSON.stringify(await database.db.selectFrom('brands').selectAll().execute());
    const audit = JSON.stringify(
      await database.db.selectFrom('audit_log').select(['actor', 'action', 'subject', 'details']).execute(),
    );
    for (const secret of [brand.securityKey, brand.apiKey]) {
      expect(stored).not.toContain(secret);
      expect(audit).not.toContain(secret);
    }
  });

  it('writes an audit entry naming the brand', async () => {
    const brand = await createTestBrand();
    const entry = await database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('subject', '=', brand.brandId)
      .where('action', '=', 'brand.create')
      .executeTakeFirst();
    expect(entry).toMatchObject({ actor: 'admin', details: { name: 'Acme', domain: 'acme.example' } });
  });

  it('answers 409 CONFLICT for an address that already has a brand, whatever its case', async () => {
    const address = randomAddress();
    await createTestBrand({ address });
    const reply = await request('POST', '/brands', {
      name: 'Again',
      domain: 'b.example',
      address: address.toUpperCase().replace('0X', '0x'),
    });
    expect(reply.status).toBe(409);
    expect(reply.body).toMatchObject({ success: false, code: 'CONFLICT', details: { field: 'address' } });
    expect(reply.body.error).toContain(address);
  });

  it('answers 400 listing every invalid field', async () => {
    const reply = await request('POST', '/brands', { name: '', domain: 'not a domain', address: '0x12' });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('VALIDATION_ERROR');
    expect(reply.body.details.errors).toEqual(
      expect.arrayContaining([
        'name: must not be empty',
        'domain: must be a domain name such as shop.example.com',
        'address: must be 0x followed by 40 hex characters',
      ]),
    );
  });

  it('answers 400 when there is no body at all', async () => {
    const reply = await request('POST', '/brands');
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('VALIDATION_ERROR');
  });
});

describe('GET and PATCH /admin/brands/:brandId', () => {
  it('lists brands and fetches one by id in any case', async () => {
    const brand = await createTestBrand({ name: 'Listed' });
    const list = await request('GET', '/brands');
    expect(list.status).toBe(200);
    expect(list.body.success).toBe(true);
    expect(list.body.brands.map((b: { brandId: string }) => b.brandId)).toContain(brand.brandId);
    expect(list.body.brands.every((b: object) => !('securityKey' in b) && !('apiKey' in b))).toBe(true);
    const one = await request('GET', `/brands/${brand.brandId.toUpperCase().replace('0X', '0x')}`);
    expect(one.body).toEqual({
      success: true,
      brand: expect.objectContaining({ brandId: brand.brandId, name: 'Listed' }),
    });
    expect(one.body.brand).not.toHaveProperty('securityKey');
  });

  it('answers 404 BRAND_NOT_FOUND for an unknown brand and 400 for a malformed id', async () => {
    const unknown = await request('GET', `/brands/${randomAddress()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('BRAND_NOT_FOUND');
    const malformed = await request('GET', '/brands/acme');
    expect(malformed.status).toBe(400);
    expect(malformed.body.details.errors).toEqual(['brandId: must be 0x followed by 40 hex characters']);
  });

  it('updates name, domain and automation, and tells listeners', async () => {
    const brand = await createTestBrand();
    changes.length = 0;
    clock.advance(60_000);
    const reply = await request('PATCH', `/brands/${brand.brandId}`, {
      name: 'Acme 2',
      domain: 'Shop.Acme.Example',
      automation: false,
    });
    expect(reply.status).toBe(200);
    expect(reply.body.brand).toMatchObject({
      name: 'Acme 2',
      domain: 'shop.acme.example',
      automation: false,
    });
    expect(changes).toEqual([{ kind: 'brand', brandId: brand.brandId }]);
    const row = await findBrand(brand.brandId);
    expect(row?.updated_at.toISOString()).toBe(clock.now().toISOString());
  });

  it('rejects an empty patch with 400 and an unknown brand with 404', async () => {
    const brand = await createTestBrand();
    const empty = await request('PATCH', `/brands/${brand.brandId}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toContain('Nothing to update');
    const unknown = await request('PATCH', `/brands/${randomAddress()}`, { name: 'X' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('BRAND_NOT_FOUND');
  });
});

describe('PUT /admin/brands/:brandId/rules/:eventType', () => {
  it('creates a custom rule with a custom_ eventId and the defaults, and keeps that eventId on update', async () => {
    const brand = await createTestBrand();
    const created = await request('PUT', `/brands/${brand.brandId}/rules/first_purchase`, {
      rewardAmount: 500,
    });
    expect(created.status).toBe(200);
    const rule = ruleSchema.parse(created.body.rule);
    // Not a spec 2.4 default: a custom event, whose id starts with custom_ (spec 2.3).
    expect(rule.eventId).toMatch(/^custom_[0-9a-f]{16}$/);
    expect(rule).toMatchObject({
      brandId: brand.brandId,
      eventType: 'first_purchase',
      rewardAmount: 500,
      cooldownHours: 24,
      maxClaims: 1,
      maxTotal: null,
      totalClaims: null,
      detectionMethod: 'manual',
      detectionConfig: {},
      isCustom: true,
      active: true,
    });

    changes.length = 0;
    const updated = await request('PUT', `/brands/${brand.brandId}/rules/first_purchase`, {
      rewardAmount: 750,
      cooldownHours: 0,
      maxClaims: -1,
      maxTotal: 1000,
      channels: ['general', 'vip'],
      detectionMethod: 'url_pattern',
      detectionConfig: { urlPatterns: ['/thanks'] },
      active: false,
    });
    expect(updated.status).toBe(200);
    expect(updated.body.rule).toMatchObject({
      eventId: rule.eventId,
      rewardAmount: 750,
      cooldownHours: 0,
      maxClaims: -1,
      maxTotal: 1000,
      detectionMethod: 'url_pattern',
      detectionConfig: { urlPatterns: ['/thanks'], channels: ['general', 'vip'] },
      active: false,
    });
    expect(changes).toEqual([{ kind: 'rules', brandId: brand.brandId }]);
  });

  it('gives a custom_ event type its own name as eventId', async () => {
    const brand = await createTestBrand();
    const reply = await request('PUT', `/brands/${brand.brandId}/rules/custom_${brand.brandId.slice(2, 12)}`, {
      rewardAmount: 5,
    });
    expect(reply.body.rule).toMatchObject({
      eventId: `custom_${brand.brandId.slice(2, 12)}`,
      isCustom: true,
    });
    const again = await request('PUT', `/brands/${brand.brandId}/rules/custom_${brand.brandId.slice(2, 12)}`, {
      rewardAmount: 6,
    });
    expect(again.body.rule).toMatchObject({ eventId: reply.body.rule.eventId, rewardAmount: 6 });
  });

  it('lets two brands use the same custom event id, each with its own rule', async () => {
    const [first, second] = [await createTestBrand(), await createTestBrand()];
    const a = await request('PUT', `/brands/${first.brandId}/rules/custom_shared`, { rewardAmount: 1 });
    const b = await request('PUT', `/brands/${second.brandId}/rules/custom_shared`, { rewardAmount: 2 });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.rule).toMatchObject({ eventId: 'custom_shared', brandId: first.brandId, rewardAmount: 1 });
    expect(b.body.rule).toMatchObject({ eventId: 'custom_shared', brandId: second.brandId, rewardAmount: 2 });
  });

  it('takes the event type from the path and ignores one in the body', async () => {
    const brand = await createTestBrand();
    const reply = await request('PUT', `/brands/${brand.brandId}/rules/review_submission`, {
      eventType: 'something_else',
      rewardAmount: 60,
    });
    expect(reply.body.rule.eventType).toBe('review_submission');
    expect(await findRuleByEventType(database.db, brand.brandId, 'something_else')).toBeUndefined();
  });

  it('answers 400 naming each invalid setting', async () => {
    const brand = await createTestBrand();
    const reply = await request('PUT', `/brands/${brand.brandId}/rules/purchase`, {
      rewardAmount: -1,
      cooldownHours: 1.5,
      maxClaims: 0,
      detectionMethod: 'psychic',
    });
    expect(reply.status).toBe(400);
    const errors: string[] = reply.body.details.errors;
    expect(errors.some((e) => e.startsWith('rewardAmount:'))).toBe(true);
    expect(errors.some((e) => e.startsWith('cooldownHours:'))).toBe(true);
    expect(errors).toContain('maxClaims: must be positive, or -1 / 999999 for unlimited');
    expect(errors.some((e) => e.startsWith('detectionMethod:'))).toBe(true);
    const missing = await request('PUT', `/brands/${brand.brandId}/rules/purchase`, {});
    expect(missing.body.details.errors).toEqual([expect.stringMatching(/^rewardAmount: /)]);
    const badType = await request('PUT', `/brands/${brand.brandId}/rules/bad-type`, { rewardAmount: 1 });
    expect(badType.status).toBe(400);
    expect(badType.body.details.errors).toEqual(['eventType: must be 1 to 50 letters, digits or underscores']);
  });

  it('answers 404 for a rule of an unknown brand, on write and on list', async () => {
    const address = randomAddress();
    const put = await request('PUT', `/brands/${address}/rules/purchase`, { rewardAmount: 1 });
    expect(put.status).toBe(404);
    expect(put.body.code).toBe('BRAND_NOT_FOUND');
    const list = await request('GET', `/brands/${address}/rules`);
    expect(list.status).toBe(404);
  });

  it('lists inactive rules too, while listRules(activeOnly) leaves them out', async () => {
    const brand = await createTestBrand();
    await request('PUT', `/brands/${brand.brandId}/rules/form_submit`, { rewardAmount: 10, active: false });
    const listed = await request('GET', `/brands/${brand.brandId}/rules`);
    expect(listed.body.rules.find((r: { eventType: string }) => r.eventType === 'form_submit').active).toBe(false);
    const active = await listRules(database.db, brand.brandId, { activeOnly: true });
    expect(active.map((row) => row.event_type)).not.toContain('form_submit');
    expect(active).toHaveLength(5);
  });
});

describe('POST /admin/brands/:brandId/rules/:eventType/archive and /restore', () => {
  it('archives a rule (paused, archivedAt set), restores it paused, audits both as admin, and refuses a repeat', async () => {
    const brand = await createTestBrand();
    const path = `/brands/${brand.brandId}/rules/account_creation`;
    const archived = await request('POST', `${path}/archive`);
    expect(archived.status, JSON.stringify(archived.body)).toBe(200);
    expect(ruleSchema.parse(archived.body.rule)).toMatchObject({ eventType: 'account_creation', active: false });
    expect(archived.body.rule.archivedAt).toEqual(expect.any(String));
    const listed = await request('GET', `/brands/${brand.brandId}/rules`);
    expect(listed.body.rules.find((r: { eventType: string }) => r.eventType === 'account_creation').archivedAt).toBe(
      archived.body.rule.archivedAt,
    );
    const again = await request('POST', `${path}/archive`);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/already archived/);

    const restored = await request('POST', `${path}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.rule).toMatchObject({ eventType: 'account_creation', active: false });
    expect(restored.body.rule.archivedAt).toBeUndefined();
    expect((await request('POST', `${path}/restore`)).status).toBe(409);

    const audit = await database.db
      .selectFrom('audit_log')
      .select(['actor', 'action'])
      .where('subject', '=', brand.brandId)
      .where('action', 'like', 'rule.%')
      .orderBy('id')
      .execute();
    expect(audit.map((entry) => `${entry.actor} ${entry.action}`)).toEqual([
      'admin rule.archive',
      'admin rule.restore',
    ]);
  });

  it('answers 404 for a missing rule or brand, 400 for a malformed event type, 401 without the token', async () => {
    const brand = await createTestBrand();
    const missing = await request('POST', `/brands/${brand.brandId}/rules/no_such_rule/archive`);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatch(/no no_such_rule rule/);
    expect((await request('POST', `/brands/${randomAddress()}/rules/purchase/archive`)).status).toBe(404);
    const malformed = await request('POST', `/brands/${brand.brandId}/rules/bad-type/archive`);
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatch(/eventType|event type/i);
    expect((await request('POST', `/brands/${brand.brandId}/rules/purchase/archive`, undefined, null)).status).toBe(
      401,
    );
    const rules = await request('GET', `/brands/${brand.brandId}/rules`);
    expect(rules.body.rules.every((r: { archivedAt?: string }) => r.archivedAt === undefined)).toBe(true);
  });
});

describe('brands service', () => {
  it('seedDefaultRules creates only the missing defaults and leaves configured rules alone', async () => {
    const brand = await createBrand(deps, { name: 'Bare', domain: 'bare.example' });
    expect(await listRules(database.db, brand.brandId, { activeOnly: false })).toEqual([]);
    await setRule(deps, brand.brandId, { eventType: 'account_creation', rewardAmount: 300 });
    const created = await seedDefaultRules(deps, brand.brandId);
    expect(created.map((rule) => rule.eventType).sort()).toEqual(
      ['complete_survey', 'form_submit', 'newsletter_subscribe', 'rate_experience', 'subscribe_renewal'].sort(),
    );
    expect(await seedDefaultRules(deps, brand.brandId)).toEqual([]);
    const account = await findRuleByEventType(database.db, brand.brandId, 'account_creation');
    expect(account && toRule(account).rewardAmount).toBe(300);
  });

  it('verifySecurityKey accepts only the brand’s own key', async () => {
    const [brand, other] = [await createTestBrand(), await createTestBrand()];
    expect(await verifySecurityKey(deps, brand.brandId, brand.securityKey)).toBe(true);
    expect(await verifySecurityKey(deps, brand.brandId.toUpperCase().replace('0X', '0x'), brand.securityKey)).toBe(
      true,
    );
    expect(await verifySecurityKey(deps, brand.brandId, other.securityKey)).toBe(false);
    expect(await verifySecurityKey(deps, brand.brandId, brand.apiKey)).toBe(false);
    expect(await verifySecurityKey(deps, randomAddress(), brand.securityKey)).toBe(false);
  });

  it('runs inside a caller’s transaction and rolls back with it', async () => {
    const address = randomAddress();
    await expect(
      database.db.transaction().execute(async (trx) => {
        await createBrand({ ...deps, db: trx }, { name: 'Rolled back', domain: 'rb.example', address });
        await setRule({ ...deps, db: trx }, address, { eventType: 'purchase', rewardAmount: 1 });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await findBrand(address)).toBeUndefined();
  });

  it('listAllBrandDomains returns website and verified domains, lowercase and unique', async () => {
    const brand = await createTestBrand({ domain: 'Cors.Example' });
    await database.db
      .updateTable('brands')
      .set({ verified_domains: JSON.stringify(['Verified.Example', 'cors.example']) })
      .where('address', '=', brand.brandId)
      .execute();
    const domains = await listAllBrandDomains(database.db);
    expect(domains).toEqual(expect.arrayContaining(['cors.example', 'verified.example', 'acme.example']));
    expect(new Set(domains).size).toBe(domains.length);
  });

  it('reads int8 reward amounts as bigint and answers them as numbers', async () => {
    const brand = await createTestBrand();
    const rule = await setRule(deps, brand.brandId, { eventType: 'big', rewardAmount: 1_000_000_000 });
    expect(rule.rewardAmount).toBe(1_000_000_000);
    const row = await findRuleByEventType(database.db, brand.brandId, 'big');
    expect(typeof row?.reward_amount).toBe('bigint');
  });
});

function findBrand(address: string) {
  return database.db.selectFrom('brands').selectAll().where('address', '=', address).executeTakeFirst();
}
