import { createAgentKeyRequestSchema } from '@pts/shared';
import { Router } from 'express';
import { z } from 'zod';
import { requireAdminToken } from '../../http/admin-auth.ts';
import { parseInput } from '../../http/validate.ts';
import type { ApiDocs } from '../../observability/openapi.ts';
import { type AgentKeysDeps, createAgentKey, listAgentKeys, revokeAgentKey } from './agent-keys.service.ts';

const keyIdParams = z.object({ keyId: z.string().regex(/^ak_[0-9a-z]{1,64}$/, 'an agent key id: ak_…') });

/**
 * `/admin/agent-keys` (operator token): create (the secret shown once), list (never the secret), revoke.
 * The CLI's `pts agent-key` commands call these.
 */
export function createAgentKeysAdminRouter(deps: AgentKeysDeps & { adminToken: string }): Router {
  const router = Router();
  const admin = requireAdminToken(deps.adminToken);
  router.post('/agent-keys', admin, async (req, res) => {
    const input = parseInput(createAgentKeyRequestSchema, req.body ?? {});
    res.status(201).json(await createAgentKey(deps, input));
  });
  router.get('/agent-keys', admin, async (_req, res) => {
    res.json({ agentKeys: await listAgentKeys(deps) });
  });
  router.post('/agent-keys/:keyId/revoke', admin, async (req, res) => {
    const { keyId } = parseInput(keyIdParams, req.params, 'path');
    res.json({ keyId, ...(await revokeAgentKey(deps, keyId)) });
  });
  return router;
}

/** The admin agent-key routes in the OpenAPI document. */
export function registerAgentKeyAdminDocs(docs: ApiDocs): void {
  const security = ['adminToken' as const];
  docs.register({
    method: 'post',
    path: '/admin/agent-keys',
    summary: 'Create an agent key (the secret is in this answer only)',
    tags: ['admin'],
    security,
    request: { body: createAgentKeyRequestSchema },
    responses: { 201: { description: '`{keyId, secret}`' } },
  });
  docs.register({
    method: 'get',
    path: '/admin/agent-keys',
    summary: 'List agent keys (never their secrets)',
    tags: ['admin'],
    security,
    responses: { 200: { description: '`{agentKeys: [...]}`' } },
  });
  docs.register({
    method: 'post',
    path: '/admin/agent-keys/:keyId/revoke',
    summary: 'Revoke an agent key',
    tags: ['admin'],
    security,
    request: { params: keyIdParams },
    responses: { 200: { description: '`{keyId, revoked}`' } },
  });
}
