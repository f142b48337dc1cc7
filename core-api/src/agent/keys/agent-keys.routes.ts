import {
  agentKeyListSchema,
  createAgentKeyRequestSchema,
  createdAgentKeySchema,
  revokedAgentKeySchema,
} from '@pts/shared';
import { z } from 'zod';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { AgentKeyAdminService } from './agent-keys.service.ts';

const keyIdParams = z.object({ keyId: z.string().regex(/^ak_[0-9a-z]{1,64}$/, 'an agent key id: ak_…') });

const adminOnly: ['adminToken'] = ['adminToken'];
const unauthorized = failure('Missing or wrong admin token');

/**
 * `/admin/agent-keys` (operator token; the admin router reads the body): create (the secret shown once), list
 * (never the secret), revoke. The CLI's `pts agent-key` commands call these.
 */
export function agentKeyAdminRoutes(deps: { keys: AgentKeyAdminService; adminToken: string }): Route[] {
  const before = [requireAdminToken(deps.adminToken)];
  return [
    defineRoute({
      method: 'post',
      path: '/agent-keys',
      summary: 'Create an agent key (the secret is in this answer only)',
      tags: ['admin'],
      security: adminOnly,
      before,
      request: { body: createAgentKeyRequestSchema, bodyReader: 'own' },
      responses: {
        201: { description: 'The new key and its secret', schema: createdAgentKeySchema },
        400: failure('Validation failed'),
        401: unauthorized,
      },
      handle: async ({ body, res }) => {
        const created = await deps.keys.create(body);
        res.status(201);
        return created;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/agent-keys',
      summary: 'List agent keys (never their secrets)',
      tags: ['admin'],
      security: adminOnly,
      before,
      responses: { 200: { description: 'Every key', schema: agentKeyListSchema }, 401: unauthorized },
      handle: async () => ({ agentKeys: await deps.keys.list() }),
    }),
    defineRoute({
      method: 'post',
      path: '/agent-keys/:keyId/revoke',
      summary: 'Revoke an agent key',
      tags: ['admin'],
      security: adminOnly,
      before,
      request: { params: keyIdParams },
      responses: {
        200: { description: 'Revoked', schema: revokedAgentKeySchema },
        400: failure('Malformed key id'),
        401: unauthorized,
        404: failure('Unknown key'),
      },
      handle: async ({ params: { keyId } }) => {
        const result = await deps.keys.revoke(keyId);
        return { keyId, ...result };
      },
    }),
  ];
}
