import type { AddressInfo } from 'node:net';
import {
  brandIdParamsSchema,
  brandSchema,
  bulkEventsResponseSchema,
  createBrandRequestSchema,
  errorEnvelopeSchema,
  eventConfigQuerySchema,
  eventConfigResponseSchema,
  eventRequestSchema,
  eventResponseSchema,
} from '@pts/shared';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createErrorHandler, notFoundHandler } from '../http/errors.ts';
import { documentRoutes } from '../http/route-table.ts';
import { type DnsRouterDeps, dnsRoutes } from '../modules/dns/dns.routes.ts';
import { type HealthDeps, healthRoutes } from '../modules/health/health.routes.ts';
import { createDocsRouter, SWAGGER_UI_ASSETS } from './docs.routes.ts';
import { createLogger } from './logger.ts';
import { type ApiDocs, createApiDocs, toOpenApiPath } from './openapi.ts';

type Json = Record<string, unknown>;

function registerSample(docs: ApiDocs) {
  docs.register({
    method: 'post',
    path: '/pts-api/manual-event',
    summary: 'Record an event',
    tags: ['events'],
    request: { body: eventRequestSchema },
    responses: {
      200: { description: 'Rewarded', schema: eventResponseSchema },
      400: { description: 'Invalid', schema: errorEnvelopeSchema },
    },
    security: ['brandSignature'],
  });
  docs.register({
    method: 'get',
    path: '/pts-api/event-config',
    summary: 'Event configuration',
    request: { query: eventConfigQuerySchema },
    responses: { 200: { description: 'Configuration', schema: eventConfigResponseSchema } },
  });
  docs.register({
    method: 'post',
    path: '/admin/brands',
    summary: 'Create a brand',
    request: { body: createBrandRequestSchema },
    responses: { 201: { description: 'Created', schema: brandSchema } },
    security: ['adminToken'],
  });
  docs.register({
    method: 'get',
    path: '/admin/brands/:brandId',
    summary: 'One brand',
    request: { params: brandIdParamsSchema },
    responses: { 200: { description: 'Brand', schema: brandSchema }, 404: { description: 'Unknown' } },
    security: ['adminToken'],
  });
  docs.register({
    method: 'get',
    path: '/admin/brands/:brandId/rules/:eventType',
    summary: 'One rule (path params without a schema)',
    responses: { 200: { description: 'Rule' } },
    security: ['adminToken', 'bearer'],
  });
  // The same schema as a response: its output form differs from its input form (lowercasing transforms).
  docs.register({
    method: 'get',
    path: '/pts-api/last-event',
    summary: 'Echo',
    responses: { 200: { description: 'The stored request', schema: eventRequestSchema } },
  });
  docs.register({
    method: 'post',
    path: '/pts-api/bulk-events',
    summary: 'Bulk',
    request: { body: z.object({ events: z.array(eventRequestSchema) }) },
    responses: { 200: { description: 'Results', schema: bulkEventsResponseSchema } },
    security: ['brandSignature'],
  });
  // Route tables document without running anything: their dependencies are only read when a route is served.
  documentRoutes(docs, healthRoutes({ chain: {}, wallets: {} } as HealthDeps));
  documentRoutes(docs, dnsRoutes({ config: { PTS_BODY_LIMIT_BYTES: 1024 } } as DnsRouterDeps), '/pts-api');
}

/** Every `$ref` string anywhere in a JSON value. */
function collectRefs(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) collectRefs(item, into);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') into.push(item);
      else collectRefs(item, into);
    }
  }
  return into;
}

describe('createApiDocs', () => {
  const docs = createApiDocs();
  registerSample(docs);
  const document = docs.document({ title: 'pts core-api', version: '0.1.0' }) as Json;
  const paths = document.paths as Record<string, Record<string, Json>>;
  const components = document.components as { schemas: Record<string, Json>; securitySchemes: Json };

  it('is an OpenAPI 3.1 document with every registered path in OpenAPI template form', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toEqual({ title: 'pts core-api', version: '0.1.0' });
    for (const path of [
      '/pts-api/manual-event',
      '/pts-api/event-config',
      '/admin/brands',
      '/admin/brands/{brandId}',
      '/admin/brands/{brandId}/rules/{eventType}',
      '/health',
      '/pts-api/health',
      '/pts-api/diagnostic',
      '/pts-api/debug',
      '/livez',
      '/readyz',
      '/pts-api/verify-dns',
    ]) {
      expect(Object.keys(paths)).toContain(path);
    }
    expect(Object.keys(paths).some((path) => path.includes(':'))).toBe(false);
    expect(toOpenApiPath('/a/:b/c/:d_e')).toBe('/a/{b}/c/{d_e}');
  });

  it('hoists schemas with an id into components and every $ref resolves there', () => {
    const refs = collectRefs(document);
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(components.schemas[ref.slice('#/components/schemas/'.length)], ref).toBeDefined();
    }
    for (const id of ['EventRequestInput', 'EventResponse', 'Error', 'Brand', 'RootHealth', 'Diagnostic']) {
      expect(Object.keys(components.schemas)).toContain(id);
    }
    const text = JSON.stringify(document);
    expect(text).not.toContain('$defs');
    expect(text).not.toContain('pts-ref:');
    expect(text).not.toContain('"$schema"');
    const manualEvent = paths['/pts-api/manual-event']?.post as Json;
    expect(manualEvent.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/EventRequestInput' } } },
    });
  });

  it('describes what callers send for requests (input) and what they get for responses (output)', () => {
    // Request forms keep the pattern a caller must satisfy; nested refs follow the same io.
    const input = components.schemas.EventRequestInput as { properties: Record<string, Json> };
    expect(input.properties.brandId).toMatchObject({ type: 'string', pattern: '^0x[a-fA-F0-9]{40}$' });
    const output = components.schemas.EventRequest as Json;
    expect(output).toBeDefined();
    expect(output).not.toEqual(input);
    const bulk = paths['/pts-api/bulk-events']?.post as Json;
    expect(JSON.stringify(bulk.requestBody)).toContain('#/components/schemas/EventRequestInput');
    // Schemas with identical input and output forms are one component.
    expect(components.schemas.ErrorInput).toBeUndefined();
    expect(components.schemas.BulkEventsResponse).toBeDefined();
  });

  it("describes rates and values: an event's value, a rate, the brand's currency", () => {
    const input = components.schemas.EventRequestInput as { properties: Record<string, Json> };
    expect(JSON.stringify(input.properties.value)).toContain('#/components/schemas/ValueInput');
    const value = components.schemas.ValueInput as { properties: Record<string, Json> };
    expect(Object.keys(value.properties)).toEqual(['amount', 'currency']);
    expect(JSON.stringify(value.properties.currency)).toContain('"JPY"');
    const rate = components.schemas.Rate as { properties: Record<string, Json> };
    expect(Object.keys(rate.properties)).toEqual(expect.arrayContaining(['pts', 'per', 'currency', 'rounding']));
    const brand = components.schemas.Brand as { properties: Record<string, Json> };
    expect(Object.keys(brand.properties)).toContain('currency');
  });

  it('turns params and query schemas into parameters and declares every path template', () => {
    const config = paths['/pts-api/event-config']?.get as { parameters: Json[] };
    expect(config.parameters).toEqual([
      {
        name: 'brandId',
        in: 'query',
        required: true,
        schema: { type: 'string', pattern: '^0x[a-fA-F0-9]{40}$' },
      },
    ]);
    const brand = paths['/admin/brands/{brandId}']?.get as { parameters: Json[] };
    expect(brand.parameters).toEqual([expect.objectContaining({ name: 'brandId', in: 'path', required: true })]);
    const rule = paths['/admin/brands/{brandId}/rules/{eventType}']?.get as { parameters: Json[] };
    expect(rule.parameters.map((p) => [p.name, p.in])).toEqual([
      ['brandId', 'path'],
      ['eventType', 'path'],
    ]);
  });

  it('declares the security schemes and per-operation requirements', () => {
    expect(Object.keys(components.securitySchemes).sort()).toEqual([
      'adminToken',
      'agentKey',
      'bearer',
      'brandSignature',
      'brandTimestamp',
      'portalSession',
    ]);
    expect(components.securitySchemes.brandSignature).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-PTS-Signature',
    });
    expect(components.securitySchemes.brandTimestamp).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-PTS-Timestamp',
    });
    expect(components.securitySchemes.bearer).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    expect(paths['/pts-api/manual-event']?.post?.security).toEqual([{ brandSignature: [], brandTimestamp: [] }]);
    expect(paths['/admin/brands/{brandId}/rules/{eventType}']?.get?.security).toEqual([
      { adminToken: [] },
      { bearer: [] },
    ]);
    expect(paths['/pts-api/health']?.get?.security).toBeUndefined();
  });

  it('gives operations unique ids and refuses a route registered twice', () => {
    const ids = Object.values(paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    expect(() =>
      docs.register({
        method: 'GET',
        path: '/admin/brands/:brandId',
        summary: 'again',
        responses: { 200: { description: 'x' } },
      }),
    ).toThrow(/registered twice/);
  });

  it('documents schemas zod cannot express in JSON Schema instead of failing', () => {
    const other = createApiDocs();
    other.register({
      method: 'post',
      path: '/odd',
      summary: 'Odd',
      request: {
        body: z.object({ when: z.date(), big: z.bigint(), cleaned: z.preprocess((v) => v, z.string()) }),
      },
      responses: {
        200: { description: 'ok', schema: z.object({ n: z.string().transform((s) => s.length) }) },
      },
    });
    const doc = other.document({ title: 't', version: '1' }) as Json;
    expect(JSON.stringify(doc)).toContain('"/odd"');
  });
});

describe('docs routes', () => {
  let base = '';
  let close: () => void = () => {};
  beforeAll(async () => {
    const docs = createApiDocs();
    registerSample(docs);
    const app = express();
    // Mounted under a prefix: every URL on the page must still resolve.
    app.use('/core', createDocsRouter({ docs, info: { title: 'pts <core-api>', version: '0.1.0' } }));
    app.use(notFoundHandler);
    app.use(createErrorHandler(createLogger({ level: 'silent' })));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  it('serves the generated document at /openapi.json', async () => {
    const response = await fetch(`${base}/core/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    const body = (await response.json()) as Json;
    expect(body.openapi).toBe('3.1.0');
    expect(Object.keys(body.paths as Json)).toContain('/pts-api/verify-dns');
  });

  it('serves a Swagger UI page whose assets are all local and answer 200', async () => {
    const page = await fetch(`${base}/core/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).toContain('pts &#60;core-api&#62;');
    expect(html).not.toMatch(/https?:\/\//);
    const urls = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => match[1] as string);
    expect(urls.length).toBeGreaterThanOrEqual(5);
    for (const url of urls) {
      expect(url.startsWith('/core/docs/')).toBe(true);
      const asset = await fetch(`${base}${url}`);
      expect(asset.status, url).toBe(200);
      expect((await asset.arrayBuffer()).byteLength, url).toBeGreaterThan(100);
    }
    const bundle = await fetch(`${base}/core/docs/swagger-ui-bundle.js`);
    expect(bundle.headers.get('content-type')).toMatch(/javascript/);
    const initializer = await (await fetch(`${base}/core/docs/swagger-initializer.js`)).text();
    expect(initializer).toContain('"/core/openapi.json"');
    expect(initializer).toContain('validatorUrl: null');
    expect(SWAGGER_UI_ASSETS.every((asset) => urls.some((url) => url.endsWith(`/${asset}`)))).toBe(true);
  });

  it('serves nothing else from the swagger-ui-dist directory', async () => {
    for (const path of [
      'package.json',
      'swagger-ui.js.map',
      'index.html',
      '..%2Fpackage.json',
      '%2E%2E%2Fpackage.json',
    ]) {
      const response = await fetch(`${base}/core/docs/${path}`);
      expect(response.status, path).toBe(404);
    }
  });
});
