import { signWebhookPayload, WEBHOOK_SIGNATURE_HEADER } from '@pts/shared';
import { guardedRequest, type HostResolver, SsrfError, type SsrfPolicy } from '../../http/ssrf-guard.ts';

/**
 * Wait after the n-th failed attempt (index n-1), in seconds: 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h,
 * 8 h, 8 h, 8 h — about 31.7 h from the first try to the last, so a receiver down for a whole day still
 * gets every event. After the last attempt fails the delivery is `dead` (replay re-queues it).
 */
export const WEBHOOK_RETRY_DELAYS_SECONDS = [30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 28_800, 28_800] as const;
/** The first try plus one retry per delay. */
export const WEBHOOK_MAX_ATTEMPTS = WEBHOOK_RETRY_DELAYS_SECONDS.length + 1;

/** When to try again after `attempt` (1-based) failed, or undefined when that was the last attempt. */
export function nextAttemptAfter(attempt: number, now: Date): Date | undefined {
  if (attempt >= WEBHOOK_MAX_ATTEMPTS) return undefined;
  const delay = WEBHOOK_RETRY_DELAYS_SECONDS[Math.max(attempt, 1) - 1] ?? 0;
  return new Date(now.getTime() + delay * 1000);
}

/** How an attempt went. `statusCode` is null when no response arrived. */
export interface WebhookAttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface SendWebhookInput {
  url: string;
  secret: string;
  /** The exact JSON body (the envelope). */
  body: string;
  eventId: string;
  type: string;
  /** Signing time (the injected clock's now). */
  now: Date;
  timeoutMs: number;
  policy: SsrfPolicy;
  resolve?: HostResolver | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * POSTs one webhook, signed with `x-pts-signature: t=…,v1=…`, through the SSRF guard, within the timeout.
 * Only 2xx counts as delivered; redirects are not followed. Never throws.
 */
export async function sendWebhook(input: SendWebhookInput): Promise<WebhookAttemptResult> {
  const started = performance.now();
  const timestamp = Math.floor(input.now.getTime() / 1000);
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const response = await guardedRequest({
      method: 'POST',
      url: input.url,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'pts-webhooks/1',
        [WEBHOOK_SIGNATURE_HEADER]: signWebhookPayload({ secret: input.secret, body: input.body, timestamp }),
        'x-pts-event-id': input.eventId,
        'x-pts-event-type': input.type,
      },
      body: input.body,
      timeoutMs: input.timeoutMs,
      policy: input.policy,
      ...(input.resolve ? { resolve: input.resolve } : {}),
      ...(input.signal ? { signal: input.signal } : {}),
      maxBodyBytes: 512,
    });
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    const error = ok ? null : `receiver answered ${response.statusCode}${snippet(response.body)}`;
    return { ok, statusCode: response.statusCode, error, durationMs: elapsed() };
  } catch (error) {
    const message = error instanceof SsrfError ? `refused target: ${error.message}` : describe(error);
    return { ok: false, statusCode: null, error: message, durationMs: elapsed() };
  }
}

function snippet(body: string): string {
  const text = body.replace(/\s+/g, ' ').trim().slice(0, 200);
  return text ? `: ${text}` : '';
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}
