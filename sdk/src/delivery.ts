import type { PtsEventResponse, PtsTrackResult } from '../sdk.d.ts';
import type { JsonStore } from './storage.ts';

/** The body of `POST /pts-api/manual-event` (spec 2.1); `userEmail` is filled in once the user is known. */
export interface EventBody {
  brandId: string;
  eventType: string;
  userEmail?: string;
  domain: string;
  sourceUrl: string;
  metadata: Record<string, unknown>;
  /** The event's value (`pts.track`'s `value`): a rate rule pays by it. */
  value?: { amount: string; currency: string };
  /**
   * The event's idempotency key, drawn once when it is queued and kept with it: a send repeated after a
   * lost answer, a reload or an offline spell is answered with the first outcome (`duplicate: true`) and
   * never pays twice (docs/api/events.md).
   */
  externalId?: string;
}

/** 128 random bits, hex: unguessable, so no other page can take an event's key first. */
function newExternalId(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return `sdk_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

interface QueuedEvent {
  /** The dedupe key: event type, user and what makes the occurrence distinct. */
  key: string;
  /** The key's part after the user, to re-key an event that waited for `identify`. */
  occurrence: string;
  body: EventBody;
}

interface Backoff {
  failures: number;
  /** Epoch ms before which nothing is sent (back-off or `Retry-After`). */
  until: number;
  /** Whether `until` is core-api's own `Retry-After`. */
  retryAfter?: boolean;
}

export interface DeliveryOptions {
  endpoint: string;
  sessionStore: JsonStore;
  storagePrefix: string;
  onAccepted(response: PtsEventResponse): void;
  onRejected(detail: { eventType: string; status: number; code?: string; message: string }): void;
  /** Base of the exponential back-off (doubles per failure, capped at 60 s). */
  retryBaseMs?: number;
  requestTimeoutMs?: number;
}

/** 429s that are the rule's final word: retrying them later would reward something that did not happen then. */
const FINAL_429 = ['COOLDOWN_ACTIVE', 'MAX_CLAIMS_REACHED', 'MAX_TOTAL_CLAIMS_REACHED'];
const MAX_DELAY_MS = 60_000;
const MAX_REMEMBERED = 500;

/**
 * The outbox: events are deduped per tab session, kept in sessionStorage until core-api has answered for
 * good, and retried with exponential back-off (or after `Retry-After`) while offline or on 5xx / 429.
 */
export function createDelivery(options: DeliveryOptions) {
  const { sessionStore: store, storagePrefix: prefix } = options;
  const retryBaseMs = options.retryBaseMs ?? 1000;
  const queueKey = `${prefix}q`;
  const sentKey = `${prefix}sent`;
  const backoffKey = `${prefix}backoff`;
  const pending = new Map<string, (result: PtsTrackResult) => void>();
  let flushing = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const queue = () => store.read<QueuedEvent[]>(queueKey, []);
  const saveQueue = (items: QueuedEvent[]) => store.write(queueKey, items);
  const sent = () => store.read<string[]>(sentKey, []);
  const remember = (key: string) =>
    store.write(sentKey, [...sent().filter((k) => k !== key), key].slice(-MAX_REMEMBERED));
  const backoff = () => store.read<Backoff>(backoffKey, { failures: 0, until: 0 });
  const settle = (key: string, result: PtsTrackResult) => {
    const resolve = pending.get(key);
    pending.delete(key);
    resolve?.(result);
  };

  const settleAllQueued = () => {
    for (const item of queue()) settle(item.key, { status: 'queued', eventType: item.body.eventType });
  };

  const schedule = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!queue().some((item) => item.body.userEmail) || isOffline()) return;
    timer = setTimeout(() => void flush(), Math.max(0, backoff().until - Date.now()));
  };

  /** Sends one event; `retry` carries the delay to wait when the answer is not final. */
  const send = async (
    item: QueuedEvent,
  ): Promise<{ result: PtsTrackResult; retryAfterMs?: number } | { retry: true; retryAfterMs?: number }> => {
    const eventType = item.body.eventType;
    let response: Response;
    const abort = new AbortController();
    const timeout = setTimeout(() => abort.abort(), options.requestTimeoutMs ?? 20_000);
    try {
      response = await fetch(options.endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(item.body),
        credentials: 'omit',
        keepalive: true,
        signal: abort.signal,
      });
    } catch {
      return { retry: true };
    } finally {
      clearTimeout(timeout);
    }
    let body: Record<string, unknown> = {};
    try {
      body = await response.json();
    } catch {
      // not JSON (a proxy's error page): the status decides
    }
    const status = response.status;
    const code = typeof body.code === 'string' ? body.code : undefined;
    if (status >= 200 && status < 300) {
      options.onAccepted(body as unknown as PtsEventResponse);
      return { result: { status: 'sent', eventType, response: body as unknown as PtsEventResponse } };
    }
    if (status === 409 && code === 'DUPLICATE_EVENT') return { result: { status: 'duplicate', eventType } };
    if (status >= 500 || status === 408 || status === 425 || (status === 429 && !FINAL_429.includes(code ?? ''))) {
      return { retry: true, retryAfterMs: retryAfterMs(response.headers.get('Retry-After'), body.retryAfter) };
    }
    const error = {
      status,
      message: typeof body.error === 'string' ? body.error : `HTTP ${status}`,
      ...(code ? { code } : {}),
    };
    options.onRejected({ eventType, ...error });
    return { result: { status: 'rejected', eventType, error } };
  };

  const flush = async (): Promise<void> => {
    if (flushing) return;
    flushing = true;
    try {
      for (;;) {
        if (backoff().until > Date.now()) break;
        const item = queue().find((candidate) => candidate.body.userEmail);
        if (!item) break;
        // Offline: nothing is tried until the browser says it is back (the `online` event resumes).
        if (isOffline()) {
          settleAllQueued();
          return;
        }
        const outcome = await send(item);
        if ('retry' in outcome) {
          const failures = backoff().failures + 1;
          const exponential = Math.min(MAX_DELAY_MS, retryBaseMs * 2 ** (failures - 1)) * (0.75 + Math.random() / 4);
          const retryAfter = outcome.retryAfterMs !== undefined;
          store.write(backoffKey, { failures, until: Date.now() + (outcome.retryAfterMs ?? exponential), retryAfter });
          settleAllQueued();
          break;
        }
        store.write(backoffKey, { failures: 0, until: 0 });
        saveQueue(queue().filter((candidate) => candidate.key !== item.key));
        settle(item.key, outcome.result);
      }
    } finally {
      flushing = false;
      schedule();
    }
  };

  return {
    /**
     * Queues an event unless its key was seen in this tab session. `occurrence` is what makes it distinct
     * for the same user (a URL, an order id); without an email it waits for `identify`.
     */
    enqueue(body: EventBody, occurrence: string): Promise<PtsTrackResult> {
      const key = dedupeKey(body.eventType, body.userEmail, occurrence);
      if (sent().includes(key)) return Promise.resolve({ status: 'duplicate', eventType: body.eventType });
      remember(key);
      body = { ...body, externalId: body.externalId ?? newExternalId() };
      saveQueue([...queue(), { key, occurrence, body }]);
      if (!body.userEmail) return Promise.resolve({ status: 'waiting', eventType: body.eventType });
      const result = new Promise<PtsTrackResult>((resolve) => pending.set(key, resolve));
      if (backoff().until > Date.now()) settle(key, { status: 'queued', eventType: body.eventType });
      void flush();
      return result;
    },
    /** Gives the events that waited for a user this email, dropping any the user already sent. */
    identify(email: string) {
      const known = sent();
      const items = queue().flatMap((item) => {
        if (item.body.userEmail) return [item];
        const key = dedupeKey(item.body.eventType, email, item.occurrence);
        if (known.includes(key)) return [];
        remember(key);
        return [{ ...item, key, body: { ...item.body, userEmail: email } }];
      });
      saveQueue(items);
      void flush();
    },
    /**
     * Sends what a previous page of this tab left queued. `now`: the network is back (the browser's
     * `online` event), so a back-off still running is cut short — a `Retry-After` is not.
     */
    resume(now = false) {
      const { failures, until, retryAfter } = backoff();
      if (now && !retryAfter && until > Date.now()) store.write(backoffKey, { failures, until: 0 });
      void flush();
    },
  };
}

function isOffline(): boolean {
  return typeof navigator !== 'undefined' && navigator.onLine === false;
}

function dedupeKey(eventType: string, email: string | undefined, occurrence: string): string {
  return `${eventType}|${(email ?? '').toLowerCase()}|${occurrence}`;
}

/** `Retry-After` in seconds or as an HTTP date, else the error body's `retryAfter` (seconds). */
function retryAfterMs(header: string | null, bodyValue: unknown): number | undefined {
  if (header) {
    const seconds = Number(header);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = Date.parse(header);
    if (Number.isFinite(date)) return Math.max(0, date - Date.now());
  }
  return typeof bodyValue === 'number' && bodyValue >= 0 ? bodyValue * 1000 : undefined;
}
