import { randomUUID } from 'node:crypto';
import { signAgentRequest } from '@pts/shared';
import type { AgentFixture, AgentTool } from '../src/agent/agent-tool.ts';
import { type CreateAgentKeyInput, createAgentKey, grantBrandToKey } from '../src/agent/keys/agent-keys.service.ts';
import { waitForMintsSettled } from './chain-helpers.ts';
import type { TestPlatform, TestResponse } from './platform.ts';

/** An agent key's credentials as the CLI prints them. */
export interface AgentKeyCredentials {
  keyId: string;
  secret: string;
}

/** The seeded world plus one key per access level (agent/agent-tool.ts `AgentFixture`). */
export interface SeededAgentFixture extends AgentFixture {
  /** The brands' security keys, for brand-signed seeding in tests. */
  securityKeys: { brand: string; otherBrand: string };
  keys: {
    /** Free tier, no permissions, no brands. Every fixture key allows 1000 calls a minute. */
    free: AgentKeyCredentials;
    /** Pro tier (converse). */
    pro: AgentKeyCredentials;
    /** canManageProgram on `brandId` only. */
    manage: AgentKeyCredentials;
    /** canOnboard. */
    onboard: AgentKeyCredentials;
  };
}

/** Earnings per `earn` event and per daily check-in of the fixture's brand. */
export const FIXTURE_EARN_AMOUNT = 100;
export const FIXTURE_CHECKIN_AMOUNT = 10;
/** Cost of the fixture perk; the user earns 3 × 100 + 10 and redeems it once. */
export const FIXTURE_PERK_COST = 30;

/** Creates a key through the real service (what `pts agent-key create` ends in). */
export function createFixtureKey(platform: TestPlatform, input: CreateAgentKeyInput): Promise<AgentKeyCredentials> {
  return createAgentKey({ db: platform.deps.db, clock: platform.clock, secrets: platform.deps.secrets }, input);
}

/**
 * Seeds through real paths: two brands with rules (`earn` 100, `daily_checkin` 10), a perk collection of
 * the first (cost 30, on chain), a member who earned 3 brand-signed `earn` events, checked in once (a
 * streak) and redeemed the perk once through `POST /services/perks/redeem`; a few events at the other
 * brand; and one agent key per access level. Start the platform with generous IP/brand limits.
 */
export async function seedAgentFixture(platform: TestPlatform): Promise<SeededAgentFixture> {
  const suffix = randomUUID().slice(0, 8);
  const rules = [
    { eventType: 'earn', rewardAmount: FIXTURE_EARN_AMOUNT, cooldownHours: 0, maxClaims: -1 },
    { eventType: 'daily_checkin', rewardAmount: FIXTURE_CHECKIN_AMOUNT, cooldownHours: 0, maxClaims: -1 },
  ];
  const brand = await platform.createBrand({ name: `Agent Shop ${suffix}`, domain: 'agent-shop.example.com', rules });
  const other = await platform.createBrand({ name: `Other Shop ${suffix}`, domain: 'other-shop.example.com', rules });
  const rule = await platform.deps.db
    .selectFrom('event_rules')
    .select('id')
    .where('brand_id', '=', brand.brandId)
    .where('event_type', '=', 'earn')
    .executeTakeFirstOrThrow();

  const admin = { authorization: `Bearer ${platform.deps.adminToken}` };
  const perk = await platform.post(
    '/admin/perks',
    { brandId: brand.brandId, name: `Agent perk ${suffix}`, cost: FIXTURE_PERK_COST, category: 'merch', maxPerUser: 5 },
    admin,
  );
  if (perk.status !== 201) throw new Error(`perk: ${perk.status} ${JSON.stringify(perk.body)}`);

  const userId = `agent-member-${suffix}@example.com`;
  const earn = async (b: typeof brand, email: string, i: number) => {
    // Past the duplicate window (60 s by default): these are separate purchases, not a repeat.
    platform.clock.advance(61_000);
    const res = await platform.signedPost(
      '/pts-api/manual-event',
      {
        brandId: b.brandId,
        eventType: 'earn',
        userEmail: email,
        domain: b === brand ? 'agent-shop.example.com' : 'other-shop.example.com',
        metadata: { i },
      },
      b.securityKey,
    );
    if (res.status !== 200) throw new Error(`event: ${res.status} ${JSON.stringify(res.body)}`);
  };
  for (let i = 0; i < 3; i++) await earn(brand, userId, i);
  await earn(brand, `agent-peer-${suffix}@example.com`, 0);
  await earn(other, userId, 0);
  await earn(other, `agent-other-${suffix}@example.com`, 0);
  platform.clock.advance(1_000);
  const checkin = await platform.signedPost(
    '/services/checkin',
    { brandId: brand.brandId, userIdentifier: userId, platform: 'web' },
    brand.securityKey,
  );
  if (checkin.status !== 200) throw new Error(`check-in: ${checkin.status} ${JSON.stringify(checkin.body)}`);
  await waitForMintsSettled(platform);
  platform.clock.advance(1_000);
  const redeemed = await platform.signedPost(
    '/services/perks/redeem',
    { brandId: brand.brandId, perkId: perk.body.perk.uuid, userIdentifier: userId, platform: 'web' },
    brand.securityKey,
  );
  if (redeemed.status !== 200) throw new Error(`redeem: ${redeemed.status} ${JSON.stringify(redeemed.body)}`);

  // Generous rates: the every-tool test calls the whole list within a minute.
  const ratePerMinute = 1000;
  const keys = {
    // The free key acts for both fixture brands (user data is scoped to a key's brands); it may not manage.
    free: await createFixtureKey(platform, {
      name: `free ${suffix}`,
      ratePerMinute,
      brandIds: [brand.brandId, other.brandId],
    }),
    pro: await createFixtureKey(platform, { name: `pro ${suffix}`, tier: 'pro', ratePerMinute }),
    manage: await createFixtureKey(platform, {
      name: `manage ${suffix}`,
      ratePerMinute,
      brandIds: [brand.brandId],
      canManageProgram: true,
    }),
    onboard: await createFixtureKey(platform, { name: `onboard ${suffix}`, canOnboard: true, ratePerMinute }),
  };
  // The onboarding key also holds the first brand, as if it had onboarded it (manage_brand_keys' example).
  await grantBrandToKey(
    { db: platform.deps.db, clock: platform.clock, secrets: platform.deps.secrets },
    keys.onboard.keyId,
    brand.brandId,
  );
  return {
    brandId: brand.brandId,
    otherBrandId: other.brandId,
    userId,
    perkId: String(perk.body.perk.uuid),
    eventId: rule.id,
    securityKeys: { brand: brand.securityKey, otherBrand: other.securityKey },
    keys,
  };
}

/** `/brands/:brandId` + `{brandId}` → `/brands/0x…` (each value URI-encoded). */
export function fillPath(path: string, params: Record<string, unknown> = {}): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`no value for :${name} in ${path}`);
    return encodeURIComponent(String(params[name]));
  });
}

export interface AgentRequest {
  method: string;
  /** Relative to `/api/v1`, parameters filled in: `/network/info`. */
  path: string;
  query?: Record<string, unknown>;
  body?: unknown;
  /** Signs with this key at the platform clock's time; unsigned without. */
  key?: AgentKeyCredentials;
  /** Overrides the signing time (Unix seconds), for clock-skew tests. */
  timestamp?: number;
  headers?: Record<string, string>;
  /** Another server than the platform's (a test app over the platform's services). */
  baseUrl?: string;
}

/** Sends an agent API request, signed with `signAgentRequest` as clients and the MCP server sign. */
export async function agentRequest(platform: TestPlatform, request: AgentRequest): Promise<TestResponse> {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) search.append(name, String(item));
    else search.append(name, String(value));
  }
  const query = search.toString();
  const pathWithQuery = `/api/v1${request.path}${query ? `?${query}` : ''}`;
  const method = request.method.toUpperCase();
  const raw = request.body === undefined ? '' : JSON.stringify(request.body);
  const headers: Record<string, string> = { ...(raw ? { 'content-type': 'application/json' } : {}) };
  if (request.key) {
    Object.assign(
      headers,
      signAgentRequest({
        keyId: request.key.keyId,
        secret: request.key.secret,
        method,
        pathWithQuery,
        body: raw,
        timestamp: request.timestamp ?? Math.floor(platform.clock.now().getTime() / 1000),
      }),
    );
  }
  Object.assign(headers, request.headers ?? {});
  const response = await fetch(`${request.baseUrl ?? platform.url}${pathWithQuery}`, {
    method,
    headers,
    ...(raw ? { body: raw } : {}),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body };
}

/** A tool's example as an agent request (method, filled path, query, body) with `key`. */
export function exampleRequest(tool: AgentTool, fixture: AgentFixture, key?: AgentKeyCredentials): AgentRequest {
  const example = tool.definition.example(fixture);
  return {
    method: tool.definition.method,
    path: fillPath(tool.definition.path, example.params),
    ...(example.query ? { query: example.query } : {}),
    ...(example.body !== undefined ? { body: example.body } : {}),
    ...(key ? { key } : {}),
  };
}
