import type { CreatedBrand } from '@pts/shared';
import pino from 'pino';
import { expect } from 'vitest';
import type { TestPlatform } from '../../../test/platform.ts';
import { type AgentPrincipal, type AgentTool, type AgentToolContext, invokeAgentTool } from '../agent-tool.ts';

// Test support shared by the agent tool tests: call a tool as REST/MCP would (its own schemas), and make
// perks through the real admin API.

/** A Brand ID nobody registered. */
export const UNKNOWN_BRAND = '0x00000000000000000000000000000000000000ff';

type RawInput = { params?: unknown; query?: unknown; body?: unknown };

/** Tool callers over one platform; `principal` null is an unsigned call. */
export function toolCaller(platform: () => TestPlatform, tools: () => AgentTool[]) {
  const contextOf = (principal: AgentPrincipal | null): AgentToolContext => ({
    principal: principal ?? undefined,
    clock: platform().clock,
    logger: pino({ level: 'silent' }),
  });
  const tool = (name: string): AgentTool => {
    const found = tools().find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no tool ${name}`);
    return found;
  };
  return {
    contextOf,
    tool,
    /** Calls a tool and checks its answer against the tool's own result schema. */
    async call(name: string, raw: RawInput, principal: AgentPrincipal | null = null) {
      const result = await invokeAgentTool(tool(name), raw, contextOf(principal));
      tool(name).definition.result.parse(result);
      // biome-ignore lint/suspicious/noExplicitAny: tests read the answer's fields
      return result as any;
    },
    /** The call's promise, for `rejects` assertions. */
    invoke: (name: string, raw: RawInput, principal: AgentPrincipal | null = null) =>
      invokeAgentTool(tool(name), raw, contextOf(principal)),
  };
}

/** Creates a perk through `POST /admin/perks` (row, then the PerkNFT collection on chain). */
export async function createPerkViaAdmin(platform: TestPlatform, brandId: string, body: Record<string, unknown>) {
  const res = await platform.post(
    '/admin/perks',
    { brandId, name: `Perk ${Math.random().toString(36).slice(2, 8)}`, ...body },
    { authorization: `Bearer ${platform.deps.adminToken}` },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.perk as { perkId: number; uuid: string };
}

/** A brand-signed manual event at `when` (the clock is set there); the brand's domain is `<name>.example.com`. */
export async function sendBrandEvent(
  platform: TestPlatform,
  brand: CreatedBrand,
  when: Date,
  eventType: string,
  identityKey: string,
) {
  platform.clock.set(when);
  const res = await platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType, userEmail: identityKey, domain: `${brand.name}.example.com`, metadata: {} },
    brand.securityKey,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** A brand named `name` (domain `<name>.example.com`) with rules, in `category` as onboarding would set it. */
export async function createCategorisedBrand(
  platform: TestPlatform,
  name: string,
  category: string,
  rules: { eventType: string; reward: number; max?: number; cooldown?: number }[],
) {
  const brand = await platform.createBrand({
    name,
    domain: `${name}.example.com`,
    rules: rules.map((r) => ({
      eventType: r.eventType,
      rewardAmount: r.reward,
      cooldownHours: r.cooldown ?? 0,
      maxClaims: r.max ?? -1,
    })),
  });
  await platform.deps.db.updateTable('brands').set({ category }).where('address', '=', brand.brandId).execute();
  // Written behind the admin API's back: drop what the brand cache may hold, as a change notice would.
  platform.services.brands.invalidate(brand.brandId);
  return brand;
}

/** A verified free-tier key acting for `brandIds`, as the router would pass it. */
export function testPrincipal(brandIds: string[]): AgentPrincipal {
  return {
    keyId: 'k',
    name: 'test key',
    brandIds,
    canManageProgram: false,
    canOnboard: false,
    tier: 'free',
    ratePerMinute: 1000,
  };
}
