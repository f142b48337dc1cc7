import { randomUUID } from 'node:crypto';
import {
  AppError,
  type Clock,
  type SavedWebhookEndpoint,
  type WebhookDelivery,
  type WebhookDeliveryStatus,
  type WebhookEndpoint,
  type WebhookTestResult,
} from '@pts/shared';
import type { Kysely } from 'kysely';
import { type Config, webhooksAllowInsecure } from '../../config.ts';
import type { DB } from '../../db/schema.ts';
import { type HostResolver, SsrfError, type SsrfPolicy, vetTarget } from '../../http/ssrf-guard.ts';
import { generateSecret, type SecretBox } from '../../security/secret-box.ts';
import { findBrandByAddress, insertAuditEntry } from '../brands/brands.repository.ts';
import { brandNotFound } from '../brands/brands.service.ts';
import { sendWebhook } from './webhooks.delivery.ts';
import { newWebhookEventId, webhookBody } from './webhooks.outbox.ts';
import {
  claimDueDeliveries,
  deleteWebhookEndpoint as deleteEndpointRow,
  findActiveWebhookEndpoints,
  findWebhookDelivery,
  findWebhookEndpoint,
  insertWebhookDelivery,
  listWebhookDeliveries as listDeliveryRows,
  recordDeliveryResult,
  requeueDelivery,
  toWebhookDelivery,
  toWebhookEndpoint,
  upsertWebhookEndpoint,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
} from './webhooks.repository.ts';

/** What the webhook admin service works with. */
export interface WebhookServiceDeps {
  db: Kysely<DB>;
  secrets: SecretBox;
  clock: Clock;
  /** Local mode (http and loopback allowed) or strict. */
  policy: SsrfPolicy;
  timeoutMs: number;
  resolve?: HostResolver | undefined;
  actor?: string | undefined;
}

const SECRET_PREFIX = 'whsec_';

/** Who a change is recorded as in the audit log (`admin` when absent). */
type Actor = { actor?: string | undefined };

/**
 * Brands' webhooks (docs/webhooks.md): endpoint administration for the admin API, and the delivery queue the
 * worker drains. One per process (compose.ts).
 */
export interface WebhookService {
  /** Sets the brand's endpoint; the signing secret is in the answer only when one was issued. */
  setEndpoint(
    brandId: string,
    input: { url: string; rotateSecret?: boolean | undefined },
    options?: Actor,
  ): Promise<SavedWebhookEndpoint>;
  /** The brand's endpoint (never its secret), or NOT_FOUND. */
  getEndpoint(brandId: string): Promise<WebhookEndpoint>;
  /** The brand's endpoint (never its secret), or null (the brand portal's Integrations page). */
  findEndpoint(brandId: string): Promise<WebhookEndpoint | null>;
  /** Removes the brand's endpoint; its queued deliveries end as dead. */
  deleteEndpoint(brandId: string, options?: Actor): Promise<void>;
  /** Sends a `webhook.test` event now and reports what the receiver answered. */
  sendTest(brandId: string, options?: Actor): Promise<WebhookTestResult>;
  /** The brand's deliveries, newest first, optionally of one status. */
  listDeliveries(
    brandId: string,
    input: { status?: WebhookDeliveryStatus | undefined; limit: number },
  ): Promise<WebhookDelivery[]>;
  /** Queues a delivery again (a dead one too); with `brandId`, a delivery of another brand is unknown. */
  replayDelivery(id: string, options?: Actor & { brandId?: string | undefined }): Promise<WebhookDelivery>;
  /** The worker's claim: due deliveries, marked `sending` until `leaseUntil` (webhooks.repository.ts). */
  claimDue(input: { now: Date; leaseUntil: Date; limit: number; maxAttempts: number }): Promise<WebhookDeliveryRow[]>;
  /** The active endpoints of these brands, by brand id. */
  activeEndpoints(brandIds: string[]): Promise<Map<string, WebhookEndpointRow>>;
  /** An attempt's result, written only while the attempt still holds its lease; false when it no longer does. */
  recordResult(input: Parameters<typeof recordDeliveryResult>[1]): Promise<boolean>;
}

/** The webhook settings of the process's config: SSRF policy (local mode allows http and loopback), timeout. */
export type WebhookConfig = Pick<Config, 'PTS_WEBHOOKS_ALLOW_INSECURE' | 'PTS_CHAIN' | 'PTS_WEBHOOK_TIMEOUT_MS'>;

export function createWebhookService(deps: {
  db: Kysely<DB>;
  secrets: SecretBox;
  clock: Clock;
  config: WebhookConfig;
  /** DNS for the SSRF guard; the system resolver when absent (tests replace it). */
  resolve?: HostResolver | undefined;
}): WebhookService {
  const allowInsecure = webhooksAllowInsecure(deps.config);
  const base: WebhookServiceDeps = {
    db: deps.db,
    secrets: deps.secrets,
    clock: deps.clock,
    policy: { allowInsecure, allowLoopback: allowInsecure },
    timeoutMs: deps.config.PTS_WEBHOOK_TIMEOUT_MS,
    resolve: deps.resolve,
  };
  const as = (options: Actor = {}): WebhookServiceDeps => ({ ...base, actor: options.actor });
  return {
    setEndpoint: (brandId, input, options) => setWebhookEndpoint(as(options), brandId, input),
    getEndpoint: (brandId) => getWebhookEndpoint(base, brandId),
    findEndpoint: async (brandId) => {
      const row = await findWebhookEndpoint(deps.db, brandId);
      return row ? toWebhookEndpoint(row) : null;
    },
    deleteEndpoint: (brandId, options) => deleteWebhookEndpoint(as(options), brandId),
    sendTest: (brandId, options) => sendTestWebhook(as(options), brandId),
    listDeliveries: (brandId, input) => listWebhookDeliveries(base, brandId, input),
    replayDelivery: (id, options = {}) => replayWebhookDelivery(as(options), id, { brandId: options.brandId }),
    claimDue: (input) => claimDueDeliveries(deps.db, input),
    activeEndpoints: (brandIds) => findActiveWebhookEndpoints(deps.db, brandIds),
    recordResult: (input) => recordDeliveryResult(deps.db, input),
  };
}

/**
 * Sets the brand's endpoint URL after vetting it (https outside local mode, no internal addresses). A new
 * endpoint, or `rotateSecret`, issues a signing secret, returned this once; otherwise the secret is kept.
 */
export async function setWebhookEndpoint(
  deps: WebhookServiceDeps,
  brandId: string,
  input: { url: string; rotateSecret?: boolean | undefined },
): Promise<SavedWebhookEndpoint> {
  await vetUrl(deps, input.url);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const brand = await findBrandByAddress(trx, brandId);
    if (!brand) throw brandNotFound(brandId);
    const existing = await findWebhookEndpoint(trx, brand.address);
    const secret = !existing || input.rotateSecret ? generateSecret(SECRET_PREFIX) : undefined;
    const row = await upsertWebhookEndpoint(trx, {
      brandId: brand.address,
      url: input.url,
      secretEncrypted: secret === undefined ? undefined : deps.secrets.encrypt(secret),
      now,
    });
    await insertAuditEntry(trx, {
      actor: deps.actor ?? 'admin',
      action: 'webhook.set',
      subject: brand.address,
      details: { url: input.url, secretIssued: secret !== undefined },
      at: now,
    });
    return { ...toWebhookEndpoint(row), ...(secret ? { secret } : {}) };
  });
}

/** The brand's endpoint (never its secret), or NOT_FOUND. */
export async function getWebhookEndpoint(
  deps: Pick<WebhookServiceDeps, 'db'>,
  brandId: string,
): Promise<WebhookEndpoint> {
  const row = await findWebhookEndpoint(deps.db, brandId);
  if (!row) throw endpointNotFound(brandId);
  return toWebhookEndpoint(row);
}

/** Removes the brand's endpoint; queued deliveries then end as `dead` (replayable once an endpoint is set). */
export async function deleteWebhookEndpoint(deps: WebhookServiceDeps, brandId: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    if (!(await deleteEndpointRow(trx, brandId))) throw endpointNotFound(brandId);
    await insertAuditEntry(trx, {
      actor: deps.actor ?? 'admin',
      action: 'webhook.delete',
      subject: brandId.toLowerCase(),
      details: {},
      at: now,
    });
  });
}

/**
 * Sends a `webhook.test` event now and reports what the receiver answered. It is recorded as a delivery
 * (delivered, or dead: a test is not retried) and can be replayed. No transaction is held while sending.
 */
export async function sendTestWebhook(deps: WebhookServiceDeps, brandId: string): Promise<WebhookTestResult> {
  const endpoint = await findWebhookEndpoint(deps.db, brandId);
  if (!endpoint?.active) throw endpointNotFound(brandId);
  const now = deps.clock.now();
  const eventId = newWebhookEventId();
  const body = webhookBody({
    eventId,
    type: 'webhook.test',
    data: { brandId: endpoint.brand_id, message: 'Test event from pts', timestamp: now.getTime() },
    at: now,
  });
  const row = await insertWebhookDelivery(deps.db, {
    id: randomUUID(),
    event_id: eventId,
    brand_id: endpoint.brand_id,
    type: 'webhook.test',
    body,
    status: 'sending',
    attempts: 1,
    // The lease keeps the worker away while this request is in flight.
    next_attempt_at: new Date(now.getTime() + deps.timeoutMs + 30_000),
    created_at: now,
    updated_at: now,
  });
  const result = await sendWebhook({
    url: endpoint.url,
    secret: deps.secrets.decrypt(endpoint.secret_encrypted),
    body,
    eventId,
    type: 'webhook.test',
    now,
    timeoutMs: deps.timeoutMs,
    policy: deps.policy,
    resolve: deps.resolve,
  });
  await recordDeliveryResult(deps.db, {
    id: row.id,
    attempt: 1,
    now: deps.clock.now(),
    status: result.ok ? 'delivered' : 'dead',
    statusCode: result.statusCode,
    error: result.error,
    nextAttemptAt: null,
  });
  const saved = await findWebhookDelivery(deps.db, row.id);
  await insertAuditEntry(deps.db, {
    actor: deps.actor ?? 'admin',
    action: 'webhook.test',
    subject: endpoint.brand_id,
    details: { deliveryId: row.id, delivered: result.ok, statusCode: result.statusCode },
    at: deps.clock.now(),
  });
  return {
    delivered: result.ok,
    statusCode: result.statusCode,
    error: result.error,
    durationMs: result.durationMs,
    delivery: toWebhookDelivery(saved ?? row),
  };
}

/** The brand's deliveries, newest first, optionally of one status. */
export async function listWebhookDeliveries(
  deps: Pick<WebhookServiceDeps, 'db'>,
  brandId: string,
  input: { status?: WebhookDeliveryStatus | undefined; limit: number },
): Promise<WebhookDelivery[]> {
  const brand = await findBrandByAddress(deps.db, brandId);
  if (!brand) throw brandNotFound(brandId);
  return (await listDeliveryRows(deps.db, { brandId: brand.address, ...input })).map(toWebhookDelivery);
}

/**
 * Re-queues a delivery (any status but `sending`, dead ones included) with a fresh set of attempts. With
 * `brandId` (the portal) a delivery of another brand is unknown: 404.
 */
export async function replayWebhookDelivery(
  deps: Pick<WebhookServiceDeps, 'db' | 'clock' | 'actor'>,
  id: string,
  scope: { brandId?: string | undefined } = {},
): Promise<WebhookDelivery> {
  const owned = scope.brandId === undefined || (await findWebhookDelivery(deps.db, id))?.brand_id === scope.brandId;
  const row = owned ? await requeueDelivery(deps.db, id, deps.clock.now()) : undefined;
  if (row) {
    await insertAuditEntry(deps.db, {
      actor: deps.actor ?? 'admin',
      action: 'webhook.replay',
      subject: row.brand_id,
      details: { deliveryId: row.id, eventId: row.event_id, type: row.type },
      at: deps.clock.now(),
    });
    return toWebhookDelivery(row);
  }
  const existing = owned ? await findWebhookDelivery(deps.db, id) : undefined;
  if (!existing) {
    throw new AppError('NOT_FOUND', `No webhook delivery ${id}; \`pts webhook deliveries --brand ID\` lists them`, {
      field: 'id',
      value: id,
    });
  }
  throw new AppError('CONFLICT', `Delivery ${id} is being sent right now; replay it once this attempt ends`, {
    status: existing.status,
  });
}

async function vetUrl(deps: WebhookServiceDeps, url: string): Promise<void> {
  try {
    await vetTarget(url, deps.policy, deps.resolve);
  } catch (error) {
    if (!(error instanceof SsrfError)) throw error;
    throw new AppError('VALIDATION_ERROR', `Webhook URL refused: ${error.message}`, {
      field: 'url',
      value: url,
      errors: [`url: ${error.message}`],
    });
  }
}

function endpointNotFound(brandId: string): AppError {
  return new AppError(
    'NOT_FOUND',
    `Brand ${brandId} has no webhook endpoint; set one with \`pts webhook set --brand ${brandId} --url URL\``,
    { brandId },
  );
}
