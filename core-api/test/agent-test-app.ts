import type { Server } from 'node:http';
import { AppError } from '@pts/shared';
import express from 'express';
import { z } from 'zod';
import { createAgentAuthenticator } from '../src/agent/agent-auth.ts';
import { createAgentRouter } from '../src/agent/agent-router.ts';
import { type AgentTool, defineAgentTool } from '../src/agent/agent-tool.ts';
import type { TestPlatform } from './platform.ts';

/**
 * A second HTTP server over the platform's real deps and services (signed replies, limits, keys), serving
 * probe tools of every access level through the real agent router: the auth and router tests need tools
 * with effects and errors that the product's tools do not have. `effects` counts each probe's calls.
 */
export async function startAgentProbeApp(platform: TestPlatform) {
  const effects = { count: 0 };
  const tools: AgentTool[] = [
    defineAgentTool({
      name: 'probe_public',
      method: 'get',
      path: '/probe/public',
      summary: 'probe',
      description: 'probe',
      access: 'public',
      result: z.object({ ok: z.boolean() }),
      example: () => ({}),
      handle: async () => ({ ok: true }),
    }),
    defineAgentTool({
      name: 'probe_optional',
      method: 'get',
      path: '/probe/optional',
      summary: 'probe',
      description: 'probe',
      access: 'optional',
      result: z.object({ keyId: z.string().nullable() }),
      example: () => ({}),
      handle: async (_input, context) => ({ keyId: context.principal?.keyId ?? null }),
    }),
    defineAgentTool({
      name: 'probe_whoami',
      method: 'get',
      path: '/probe/whoami',
      summary: 'probe',
      description: 'probe',
      access: 'key',
      request: { query: z.object({ x: z.string().optional() }) },
      result: z.object({ keyId: z.string() }),
      example: () => ({}),
      handle: async (_input, context) => ({ keyId: context.principal!.keyId }),
    }),
    defineAgentTool({
      name: 'probe_count',
      method: 'post',
      path: '/probe/count',
      summary: 'probe',
      description: 'probe',
      access: 'key',
      request: { body: z.object({ by: z.number().int().min(1).max(10) }) },
      result: z.object({ count: z.number() }),
      example: () => ({ body: { by: 1 } }),
      handle: async ({ body }) => {
        effects.count += body.by;
        return { count: effects.count };
      },
    }),
    defineAgentTool({
      name: 'probe_manage',
      method: 'post',
      path: '/probe/brands/:brandId',
      summary: 'probe',
      description: 'probe',
      access: 'manage',
      request: { params: z.object({ brandId: z.string() }) },
      result: z.object({ brandId: z.string() }),
      example: () => ({}),
      handle: async ({ params }) => ({ brandId: params.brandId }),
    }),
    defineAgentTool({
      name: 'probe_onboard',
      method: 'post',
      path: '/probe/onboard',
      summary: 'probe',
      description: 'probe',
      access: 'onboard',
      result: z.object({ ok: z.boolean() }),
      example: () => ({}),
      handle: async () => ({ ok: true }),
    }),
    defineAgentTool({
      name: 'probe_converse',
      method: 'post',
      path: '/probe/converse',
      summary: 'probe',
      description: 'probe',
      access: 'converse',
      result: z.object({ ok: z.boolean() }),
      example: () => ({}),
      handle: async () => ({ ok: true }),
    }),
    defineAgentTool({
      name: 'probe_fail',
      method: 'get',
      path: '/probe/fail',
      summary: 'probe',
      description: 'probe',
      access: 'public',
      request: { query: z.object({ status: z.coerce.number().int() }) },
      result: z.object({}),
      example: () => ({}),
      handle: async ({ query }) => {
        if (query.status === 404) throw new AppError('NOT_FOUND', 'No such thing');
        if (query.status === 409) throw new AppError('CONFLICT', 'Already there');
        if (query.status === 403) throw new AppError('FORBIDDEN', 'Not yours');
        throw new Error('secret internal detail at /srv/app.ts:12');
      },
    }),
  ];
  const app = express();
  app.set('trust proxy', false);
  app.use(platform.services.signedReplies.capture);
  app.use(
    '/api/v1',
    createAgentRouter({
      clock: platform.clock,
      logger: platform.deps.logger,
      limits: platform.services.limits,
      signedReplies: platform.services.signedReplies,
      recordSignature: platform.services.agent.recordSignature,
      noteKeyUsed: platform.services.agent.noteKeyUsed,
      tools,
      authenticate: createAgentAuthenticator({
        db: platform.deps.db,
        clock: platform.clock,
        secrets: platform.deps.secrets,
        toleranceSeconds: platform.deps.config.PTS_SIGNATURE_TOLERANCE_SECONDS,
      }),
    }),
  );
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    effects,
    tools,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
