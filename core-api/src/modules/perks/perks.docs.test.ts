import { describe, expect, it } from 'vitest';
import { createApiDocs } from '../../observability/openapi.ts';
import { registerConstraintDocs } from './constraints/constraints.routes.ts';
import { registerPerkDocs } from './perks.routes.ts';

describe('perk and constraint OpenAPI entries', () => {
  it('document every route with its request and response schemas', () => {
    const docs = createApiDocs();
    registerPerkDocs(docs);
    registerConstraintDocs(docs);
    const document = docs.document({ title: 'pts', version: 'test' }) as {
      paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
    };
    expect(Object.keys(document.paths).sort()).toEqual([
      '/admin/perks',
      '/admin/perks/{id}',
      '/admin/perks/{id}/constraints',
      '/admin/perks/{id}/constraints/{constraintId}',
      '/constraint-updater/invalidate-external-api',
      '/services/chat-roles',
      '/services/perks/check-eligibility',
      '/services/perks/{brandId}',
    ]);
    const invalidate = document.paths['/constraint-updater/invalidate-external-api']?.post;
    expect(invalidate?.requestBody).toBeDefined();
    expect(Object.keys(invalidate?.responses ?? {})).toEqual(['200', '400', '401']);
    expect(document.paths['/admin/perks']?.post?.responses['201']).toBeDefined();
  });
});
