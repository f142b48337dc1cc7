import type { Clock } from '@pts/shared';
import type { Logger } from 'pino';
import { type Config, webhooksAllowInsecure } from '../../config.ts';
import type { HostResolver, SsrfPolicy } from '../../http/ssrf-guard.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import { nextAttemptAfter, sendWebhook, WEBHOOK_MAX_ATTEMPTS } from './webhooks.delivery.ts';
import type { WebhookDeliveryRow } from './webhooks.repository.ts';
import type { WebhookService } from './webhooks.service.ts';

/** What the worker needs: the delivery queue of the webhook service (compose.ts builds it), plus test hooks. */
export type WebhookWorkerDeps = {
  webhooks: Pick<WebhookService, 'claimDue' | 'activeEndpoints' | 'recordResult'>;
  clock: Clock;
  logger: Logger;
  secrets: SecretBox;
  config: Config;
} & {
  /** DNS for the SSRF guard; the system resolver when absent. */
  resolve?: HostResolver;
  /** Background polling interval; `0` disables the timer (tests drive `runOnce`). Default PTS_WEBHOOK_POLL_MS. */
  pollIntervalMs?: number;
};

/** What one `runOnce` did. */
export interface WebhookRunResult {
  claimed: number;
  delivered: number;
  failed: number;
  dead: number;
}

export interface WebhookWorker {
  /** Claims and sends everything due now (in rounds of PTS_WEBHOOK_CONCURRENCY) and waits for the results. */
  runOnce(): Promise<WebhookRunResult>;
  /** Stops polling and aborts requests in flight (their leases expire and they are retried). */
  stop(): Promise<void>;
}

/** Extra lease beyond the request timeout before another worker may take a claimed delivery over. */
const LEASE_MARGIN_MS = 30_000;

/**
 * Starts the delivery worker: polls for due deliveries, sends each outside any transaction with at most
 * PTS_WEBHOOK_CONCURRENCY requests in flight, and records the outcome (2xx delivered; otherwise retried with
 * back-off, then dead). Times come from the injected clock. At-least-once: a crash between the receiver's
 * answer and the recorded result re-sends after the lease.
 */
export function startWebhookWorker(deps: WebhookWorkerDeps): WebhookWorker {
  const { config, logger } = deps;
  const concurrency = config.PTS_WEBHOOK_CONCURRENCY;
  const timeoutMs = config.PTS_WEBHOOK_TIMEOUT_MS;
  const allowInsecure = webhooksAllowInsecure(config);
  const policy: SsrfPolicy = { allowInsecure, allowLoopback: allowInsecure };
  const pollIntervalMs = deps.pollIntervalMs ?? config.PTS_WEBHOOK_POLL_MS;
  const aborter = new AbortController();
  let stopped = false;
  let inFlight = 0;
  const running = new Set<Promise<unknown>>();

  async function claim(limit: number): Promise<WebhookDeliveryRow[]> {
    const now = deps.clock.now();
    return deps.webhooks.claimDue({
      now,
      leaseUntil: new Date(now.getTime() + timeoutMs + LEASE_MARGIN_MS),
      limit,
      maxAttempts: WEBHOOK_MAX_ATTEMPTS,
    });
  }

  /** Sends claimed rows; resolves with the status each ended in. */
  async function deliverAll(rows: WebhookDeliveryRow[]): Promise<('delivered' | 'failed' | 'dead' | 'lost')[]> {
    const endpoints = await deps.webhooks.activeEndpoints([...new Set(rows.map((row) => row.brand_id))]);
    return Promise.all(
      rows.map(async (row) => {
        const endpoint = endpoints.get(row.brand_id);
        const now = () => deps.clock.now();
        if (!endpoint) {
          await deps.webhooks.recordResult({
            id: row.id,
            attempt: row.attempts,
            now: now(),
            status: 'dead',
            statusCode: null,
            error: 'the brand has no active webhook endpoint',
            nextAttemptAt: null,
          });
          return 'dead';
        }
        const result = await sendWebhook({
          url: endpoint.url,
          secret: deps.secrets.decrypt(endpoint.secret_encrypted),
          body: row.body,
          eventId: row.event_id,
          type: row.type,
          now: now(),
          timeoutMs,
          policy,
          resolve: deps.resolve,
          signal: aborter.signal,
        });
        if (stopped) return 'lost';
        const finishedAt = now();
        const retryAt = result.ok ? undefined : nextAttemptAfter(row.attempts, finishedAt);
        const status = result.ok ? 'delivered' : retryAt ? 'failed' : 'dead';
        const recorded = await deps.webhooks.recordResult({
          id: row.id,
          attempt: row.attempts,
          now: finishedAt,
          status,
          statusCode: result.statusCode,
          error: result.error,
          nextAttemptAt: retryAt ?? null,
        });
        if (!recorded) return 'lost';
        if (!result.ok) {
          logger.warn(
            { deliveryId: row.id, brandId: row.brand_id, attempt: row.attempts, status, error: result.error },
            'webhook attempt failed',
          );
        }
        return status;
      }),
    );
  }

  async function runOnce(): Promise<WebhookRunResult> {
    const total: WebhookRunResult = { claimed: 0, delivered: 0, failed: 0, dead: 0 };
    while (!stopped) {
      const rows = await claim(concurrency);
      if (rows.length === 0) break;
      total.claimed += rows.length;
      for (const status of await deliverAll(rows)) if (status !== 'lost') total[status] += 1;
      if (rows.length < concurrency) break;
    }
    return total;
  }

  // Background loop: whenever a slot is free, claim that many rows; a slow receiver holds one slot only.
  let pumping: Promise<void> | undefined;
  function pump(): Promise<void> {
    if (pumping || stopped) return pumping ?? Promise.resolve();
    pumping = claimAndDispatch().finally(() => {
      pumping = undefined;
    });
    return pumping;
  }
  async function claimAndDispatch(): Promise<void> {
    try {
      while (!stopped && inFlight < concurrency) {
        const rows = await claim(concurrency - inFlight);
        if (rows.length === 0) break;
        for (const row of rows) {
          inFlight += 1;
          const task = deliverAll([row])
            .catch((error: unknown) => logger.error({ err: error, deliveryId: row.id }, 'webhook delivery failed'))
            .finally(() => {
              inFlight -= 1;
              running.delete(task);
              void pump();
            });
          running.add(task);
        }
      }
    } catch (error) {
      if (!stopped) logger.error({ err: error }, 'webhook worker could not claim deliveries');
    }
  }

  const timer = pollIntervalMs > 0 ? setInterval(() => void pump(), pollIntervalMs) : undefined;
  timer?.unref();

  return {
    runOnce,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      aborter.abort();
      await pumping;
      await Promise.allSettled([...running]);
    },
  };
}
