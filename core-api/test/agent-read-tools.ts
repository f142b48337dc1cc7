import { AppError } from '@pts/shared';
import { z } from 'zod';
import { type AgentTool, type AgentToolDeps, defineAgentTool } from '../src/agent/agent-tool.ts';
import { readBalance } from '../src/modules/balances/balances.routes.ts';
import { findBrandByAddress, listBrands } from '../src/modules/brands/brands.repository.ts';

const brandId = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a brand address')
  .transform((value) => value.toLowerCase());

/**
 * Three read tools of spec 4.1 on real data (brands table, on-chain balance + pending mints), for the converse
 * and MCP tests while the areas' own tools are built on other branches: the tests need real tools to plan
 * over and run, with the spec's paths (the offline planner finds tools by path).
 */
export function readToolsForTests(d: AgentToolDeps): AgentTool[] {
  return [
    defineAgentTool({
      name: 'list_brands',
      method: 'get',
      path: '/brands',
      summary: 'Brands',
      description: 'Every brand with its name and domain, oldest first.',
      access: 'public',
      request: { query: z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) }) },
      result: z.object({ brands: z.array(z.object({ brandId: z.string(), name: z.string() })) }),
      example: () => ({}),
      handle: async ({ query }) => ({
        brands: (await listBrands(d.deps.db))
          .slice(0, query.limit)
          .map((row) => ({ brandId: row.address, name: row.name, domain: row.website_domain })),
      }),
    }),
    defineAgentTool({
      name: 'get_brand',
      method: 'get',
      path: '/brands/:brandId',
      summary: 'One brand',
      description: 'A brand by address; 404 when unknown.',
      access: 'public',
      request: { params: z.object({ brandId }) },
      result: z.object({ brandId: z.string(), name: z.string() }),
      example: (f) => ({ params: { brandId: f.brandId } }),
      handle: async ({ params }) => {
        const row = await findBrandByAddress(d.deps.db, params.brandId);
        if (!row) throw new AppError('BRAND_NOT_FOUND', `Brand ${params.brandId} is not registered`);
        return { brandId: row.address, name: row.name };
      },
    }),
    defineAgentTool({
      name: 'get_user_balance',
      method: 'get',
      path: '/users/:userId/brands/:brandId/balance',
      summary: 'A user balance',
      description: 'Spendable pts (on chain) and pending rewards of a user.',
      access: 'key',
      request: { params: z.object({ userId: z.email().transform((v) => v.toLowerCase()), brandId }) },
      result: z.object({ balance: z.number(), pending: z.number() }),
      example: (f) => ({ params: { userId: f.userId, brandId: f.brandId } }),
      handle: async ({ params }) => ({
        userId: params.userId,
        brandId: params.brandId,
        ...(await readBalance(
          {
            db: d.deps.db,
            publicClient: d.deps.publicClient,
            rewardToken: d.deps.chain.contracts.rewardToken as `0x${string}`,
          },
          params.userId,
        )),
      }),
    }),
  ];
}
