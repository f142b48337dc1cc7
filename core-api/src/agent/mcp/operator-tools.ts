import { type Clock, type CoreClient, createCoreClient } from '@pts/shared';
import { z } from 'zod';
import { errorResult, jsonResult, type McpToolEntry } from './mcp-tool.ts';
import { type McpToolAnnotations, READ_ONLY, writes } from './tool-annotations.ts';
import { documentInputSchema, type JsonObjectSchema } from './tool-arguments.ts';
import { toolFailureOf } from './tool-errors.ts';

/** Where the brand-facing API is and whose credentials sign the calls (never sent: only the signature is). */
export interface OperatorCredentials {
  /** core-api's base URL, e.g. `http://127.0.0.1:3000`. */
  apiUrl: string;
  brandId: string;
  securityKey: string;
  fetch?: typeof fetch;
  /** Source of the signature timestamps (the system clock when absent). */
  clock?: Clock;
}

interface OperatorToolSpec<S extends z.ZodObject> {
  name: string;
  description: string;
  annotations: McpToolAnnotations;
  input: S;
  run(client: CoreClient, args: z.output<S>, http: HttpCall): Promise<unknown>;
}

type HttpCall = (
  method: 'GET' | 'POST',
  path: string,
  options?: { body?: unknown; headers?: Record<string, string> },
) => Promise<unknown>;

const userIdentifier = z
  .string()
  .min(3)
  .max(320)
  .describe('The user: an email-shaped identifier (`ada@example.com`, `discord_123@pts.local`)');
const platform = z.string().min(1).max(32).describe('Where the user acted: web, discord, telegram, x…');
const event = z.object({
  eventType: z.string().min(1).max(100).describe("The rule's event type (see brand_event_config)"),
  userEmail: z.string().min(3).max(320).describe('The user rewarded (email-shaped identifier)'),
  metadata: z.record(z.string(), z.unknown()).optional().describe('Free JSON kept with the event (≤ 10 KB)'),
  externalId: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe('Idempotency key (an order or post id): the same one is never rewarded twice'),
});

const spec = <S extends z.ZodObject>(s: OperatorToolSpec<S>) => s as unknown as OperatorToolSpec<z.ZodObject>;

/**
 * The brand-operator tools of the seed system's MCP server, each one call of pts's brand-facing HTTP API
 * signed with the brand's security key (`signRequest` via the shared core client) — what a brand's own
 * back-end or bot does. Amounts are whole pts.
 */
const OPERATOR_TOOLS = [
  spec({
    name: 'brand_track_event',
    annotations: writes({ destructive: false, idempotent: false }),
    description:
      "Rewards one user for one event of the brand's program (POST /pts-api/manual-event, brand-signed). " +
      'The reward is the rule amount; limits, cooldowns and duplicates are judged by the server and answered as ' +
      'errors (429 cooldown with the seconds left, 409 duplicate…). Answers the event id, reward and mint status.',
    input: event,
    run: (client, args) => client.manualEvent(args),
  }),
  spec({
    name: 'brand_bulk_events',
    annotations: writes({ destructive: false, idempotent: false }),
    description:
      'Sends up to 100 events at once (POST /pts-api/bulk-events); each is judged like brand_track_event and ' +
      'answered in order with its own success or error.',
    input: z.object({ events: z.array(event).min(1).max(100) }),
    run: (client, args) => client.bulkEvents(args.events),
  }),
  spec({
    name: 'brand_event_config',
    annotations: READ_ONLY,
    description:
      "The brand's active event rules (GET /pts-api/event-config): event types and ids, reward amounts in pts, " +
      'per-user and total claim limits, cooldown hours.',
    input: z.object({}),
    run: (client) => client.eventConfig(),
  }),
  spec({
    name: 'brand_health',
    annotations: READ_ONLY,
    description: 'Service health (GET /health): database, chain, minter queue and version. `status` is ok or degraded.',
    input: z.object({}),
    run: (_client, _args, http) => http('GET', '/health'),
  }),
  spec({
    name: 'brand_resolve_user',
    annotations: writes({ destructive: false, idempotent: true }),
    description:
      "Resolves an email to the user's wallet address, creating the wallet when the user has none yet " +
      '(POST /pts-api/pregenerate-user). `created_new` says which. Use the address for brand_perk_eligibility.',
    input: z.object({ email: z.string().min(3).max(320) }),
    run: (client, args) => client.pregenerateUser(args.email),
  }),
  spec({
    name: 'brand_streak_checkin',
    annotations: writes({ destructive: false, idempotent: true }),
    description:
      "Daily check-in (POST /services/checkin): extends the user's daily streak and pays the check-in reward, " +
      'once per UTC day (a repeat answers alreadyClaimed: true and pays nothing).',
    input: z.object({ userIdentifier, platform: platform.default('web') }),
    run: (client, args) => client.checkin(args.userIdentifier, args.platform),
  }),
  spec({
    name: 'brand_streak_status',
    annotations: READ_ONLY,
    description:
      "A user's daily streak (GET /services/streak/status): current and longest streak in days, multiplier, " +
      'next milestone, unclaimed milestones. A user who never checked in has a streak of 0.',
    input: z.object({ userIdentifier }),
    run: (client, args) => client.streakStatus(args.userIdentifier),
  }),
  spec({
    name: 'brand_claim_milestone',
    annotations: writes({ destructive: false, idempotent: true }),
    description:
      'Claims a reached streak milestone (POST /services/streak/claim-milestone) and pays its bonus in pts; ' +
      'a milestone not reached or already claimed answers 400 CLAIM_FAILED.',
    input: z.object({ userIdentifier, milestoneDays: z.number().int().min(1).max(3650) }),
    run: (client, args) => client.claimMilestone(args.userIdentifier, args.milestoneDays),
  }),
  spec({
    name: 'brand_leaderboard',
    annotations: READ_ONLY,
    description:
      "The brand's leaderboard (GET /services/leaderboard): metric pts_earned (default), streak or activity; " +
      'period daily, weekly, monthly or all_time; up to 100 entries. Empty when nobody earned in the period.',
    input: z.object({
      metric: z.string().optional(),
      period: z.string().optional(),
      limit: z.number().int().min(1).max(100).optional(),
      user: z.string().optional().describe('A user whose own rank is added as `me`'),
    }),
    run: (client, args) => client.leaderboard(args),
  }),
  spec({
    name: 'brand_perks',
    annotations: READ_ONLY,
    description:
      "The brand's perk catalogue (GET /services/perks): name, price in pts, supply left, category. " +
      '`available: true` keeps perks that can be redeemed now.',
    input: z.object({ category: z.string().optional(), available: z.boolean().optional() }),
    run: (client, args) => client.perks(args),
  }),
  spec({
    name: 'brand_perk_eligibility',
    annotations: READ_ONLY,
    description:
      "Whether a wallet meets a perk's constraints (POST /services/perks/check-eligibility): eligible, and " +
      'each failing constraint. Get the wallet with brand_resolve_user.',
    input: z.object({
      perkId: z.union([z.string(), z.number()]),
      userAddress: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address'),
    }),
    run: (client, args) => client.checkEligibility(args.perkId, args.userAddress),
  }),
  spec({
    name: 'brand_redeem_perk',
    annotations: writes({ destructive: true, idempotent: false }),
    description:
      "Redeems a perk for a user (POST /services/perks/redeem): spends the perk's price from the user's pts " +
      'and answers a confirmation code. Not repeated on failure: 409 INSUFFICIENT_BALANCE or SOLD_OUT say why.',
    input: z.object({ perkId: z.union([z.string(), z.number()]), userIdentifier, platform: platform.optional() }),
    run: (client, args) => client.redeemPerk(args),
  }),
  spec({
    name: 'brand_achievements',
    annotations: READ_ONLY,
    description:
      "A user's achievements with the brand (GET /services/achievements): each with progress, target and " +
      'whether it is unlocked.',
    input: z.object({ userIdentifier }),
    run: (client, args) => client.achievements(args.userIdentifier),
  }),
  spec({
    name: 'brand_user_balance',
    annotations: READ_ONLY,
    description:
      "A user's pts (GET /services/balance): `balance` is spendable (read live on chain), `pending` rewards " +
      'not yet minted. A user who never earned has 0 and no wallet.',
    input: z.object({ userIdentifier }),
    run: (client, args) => client.balance(args.userIdentifier),
  }),
  spec({
    name: 'brand_relay_transaction',
    annotations: writes({ destructive: true, idempotent: false }),
    description:
      "Relays a user's transaction gas-free (POST /relayer/relay) to a whitelisted pts contract and function, " +
      "authorised by the user's own access token (Bearer), never the brand key. Answers the transaction hash " +
      'and status (pending until mined). 35 relays per user per hour.',
    input: z.object({
      userAccessToken: z.string().min(10).describe("The user's pts access token (from the identity provider)"),
      to: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
      data: z.string().regex(/^0x[0-9a-fA-F]*$/),
      userAddress: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
      value: z.string().optional(),
      gasLimit: z.number().int().optional(),
      metadata: z.record(z.string(), z.unknown()).optional(),
    }),
    run: (_client, { userAccessToken, ...body }, http) =>
      http('POST', '/relayer/relay', { body, headers: { authorization: `Bearer ${userAccessToken}` } }),
  }),
];

/** The names of the operator tools (the MCP servers list them after the agent tools). */
export const OPERATOR_TOOL_NAMES: readonly string[] = OPERATOR_TOOLS.map((tool) => tool.name);

/** The operator tools bound to one brand's credentials. */
export function operatorMcpTools(credentials: OperatorCredentials): McpToolEntry[] {
  const fetchImpl = credentials.fetch ?? globalThis.fetch;
  const baseUrl = credentials.apiUrl.replace(/\/+$/, '');
  const client = createCoreClient({
    baseUrl,
    brandId: credentials.brandId,
    securityKey: credentials.securityKey,
    fetch: fetchImpl,
    retries: 1,
    ...(credentials.clock ? { clock: credentials.clock } : {}),
  });
  // Unsigned calls (health; the relay, authorised by the user's token): the answer or a CoreApiError-like failure.
  const http: HttpCall = async (method, path, options = {}) => {
    const response = await fetchImpl(`${baseUrl}${path}`, {
      method,
      headers: {
        accept: 'application/json',
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let body: Record<string, unknown> | null = null;
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
    } catch {
      body = { error: `${method} ${path} answered HTTP ${response.status} with a body that is not JSON` };
      if (response.ok)
        throw Object.assign(new Error(String(body.error)), {
          name: 'CoreApiError',
          status: 502,
          code: 'INVALID_RESPONSE',
        });
    }
    if (!response.ok && !(path === '/health' && response.status === 503)) {
      const failure = Object.assign(new Error(String(body?.error ?? `HTTP ${response.status}`)), {
        name: 'CoreApiError',
        status: response.status,
        code: String(body?.code ?? `HTTP_${response.status}`),
        details: body?.details,
      });
      throw failure;
    }
    return body;
  };
  return OPERATOR_TOOLS.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: documentInputSchema(tool.name, z.toJSONSchema(tool.input, { io: 'input' }) as JsonObjectSchema),
    annotations: tool.annotations,
    async call(args) {
      const parsed = tool.input.safeParse(args);
      if (!parsed.success) {
        const errors = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`);
        return errorResult({ code: 'validation', status: 400, message: errors.join('; '), reason: 'VALIDATION_ERROR' });
      }
      try {
        return jsonResult(await tool.run(client, parsed.data, http));
      } catch (error) {
        return errorResult(toolFailureOf(error));
      }
    },
  }));
}
