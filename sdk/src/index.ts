import { isEmailAddress } from '../../shared/src/schemas/email.ts';
import type {
  PtsApi,
  PtsCommand,
  PtsEventConfig,
  PtsEventMap,
  PtsTrackOptions,
  PtsTrackResult,
  PtsValue,
} from '../sdk.d.ts';
import { createDelivery, type EventBody } from './delivery.ts';
import { type Detected, pageOf, startDetection } from './detection.ts';
import { createJsonStore } from './storage.ts';

declare const __PTS_SDK_VERSION__: string;

const VERSION = typeof __PTS_SDK_VERSION__ === 'string' ? __PTS_SDK_VERSION__ : 'dev';
const BRAND_ID = /^0x[a-fA-F0-9]{40}$/;
const EVENT_TYPE = /^[a-zA-Z0-9_]{1,50}$/;
const USER_KEY = 'pts:user';
const CONFIG_MAX_AGE_MS = 5 * 60_000;
const CONFIG_ATTEMPTS = 8;
const COMMANDS: readonly string[] = ['track', 'identify', 'reset', 'on'] satisfies PtsCommand[0][];

/**
 * Why `value` cannot be sent as an event's value, or undefined when it can: core-api wants the amount as a
 * decimal string (a number would have passed through a float) and an ISO 4217 code; it judges the currency's
 * decimals and the brand's currency itself.
 */
function problemOfValue(value: unknown): string | undefined {
  const { amount, currency } = (value ?? {}) as { amount?: unknown; currency?: unknown };
  if (typeof amount !== 'string' || !/^(0|[1-9]\d*)(\.\d+)?$/.test(amount)) {
    return 'value.amount must be a decimal string such as "12.50" (not a number)';
  }
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) {
    return 'value.currency must be an ISO 4217 code such as "USD"';
  }
  return undefined;
}

/** Everything the script does on load; nothing here may throw into the host page. */
function boot(): void {
  const existing = window.pts as PtsApi | PtsCommand[] | { q?: PtsCommand[] } | undefined;
  if (existing && typeof (existing as PtsApi).track === 'function' && !Array.isArray(existing)) return; // loaded twice

  const script = findScript();
  const brandId = script?.getAttribute('data-brand-id')?.trim().toLowerCase() ?? '';
  const base = (script?.getAttribute('data-api-url') ?? script?.src.replace(/\/sdk\.js(?:[?#].*)?$/, '') ?? '').replace(
    /\/+$/,
    '',
  );
  const formTimeoutMs = Number(script?.getAttribute('data-form-timeout-ms')) || 15_000;
  const retryBaseMs = Number(script?.getAttribute('data-retry-base-ms')) || 1000;
  const valid = BRAND_ID.test(brandId) && /^https?:\/\//.test(base);
  if (!valid) warn('data-brand-id must be the brand id (0x + 40 hex digits) on the sdk.js script tag; pts is off');

  const session = createJsonStore('sessionStorage');
  const local = createJsonStore('localStorage');
  const prefix = `pts:${brandId}:`;
  const listeners: { [K in keyof PtsEventMap]: Set<(detail: PtsEventMap[K]) => void> } = {
    reward: new Set(),
    rejected: new Set(),
  };
  const emit = <K extends keyof PtsEventMap>(event: K, detail: PtsEventMap[K]) => {
    for (const listener of listeners[event]) {
      try {
        listener(detail);
      } catch (error) {
        warn(`a "${event}" listener threw`, error);
      }
    }
  };
  const delivery = createDelivery({
    endpoint: `${base}/pts-api/manual-event`,
    sessionStore: session,
    storagePrefix: prefix,
    retryBaseMs,
    onAccepted: (response) => emit('reward', response),
    onRejected: (detail) => {
      warn(
        `${detail.eventType} was refused (${detail.status}${detail.code ? ` ${detail.code}` : ''}): ${detail.message}`,
      );
      emit('rejected', detail);
    },
  });
  const user = () => {
    const email = local.read<string | undefined>(USER_KEY, undefined);
    return typeof email === 'string' && isEmailAddress(email) ? email : undefined;
  };

  const send = (
    eventType: string,
    detection: string,
    occurrence: string,
    email: string | undefined,
    metadata: PtsTrackOptions['metadata'] = {},
    value?: PtsValue,
  ): Promise<PtsTrackResult> => {
    const body: EventBody = {
      brandId,
      eventType,
      domain: location.hostname.toLowerCase(),
      sourceUrl: sourceUrl(),
      metadata: { ...(metadata && typeof metadata === 'object' ? metadata : {}), detection, sdkVersion: VERSION },
      ...(email ? { userEmail: email } : {}),
      ...(value ? { value: { amount: value.amount, currency: value.currency } } : {}),
    };
    return delivery.enqueue(body, occurrence);
  };

  // Configuration: loaded once per page (the HTTP cache keeps it 5 minutes); the tab's last copy stands in
  // while core-api cannot be reached, and loading is retried until it can.
  const configKey = `${prefix}config`;
  const visited: string[] = [location.href];
  let onNavigate: ((href: string) => void) | undefined;
  let resolveReady: (rules: PtsEventConfig[]) => void = () => {};
  const ready = new Promise<PtsEventConfig[]>((resolve) => {
    resolveReady = resolve;
  });
  const start = (rules: PtsEventConfig[]) => {
    if (onNavigate) return;
    onNavigate = startDetection({
      rules,
      formTimeoutMs,
      sessionStore: session,
      storagePrefix: prefix,
      visited: visited.splice(0),
      onDetected: (detected: Detected) => {
        const email = detected.email ?? user();
        if (detected.email && !user()) local.write(USER_KEY, detected.email);
        void send(detected.rule.eventType, detected.rule.detectionMethod, detected.occurrence, email);
      },
    });
    resolveReady(rules);
  };
  const loadConfig = async (attempt: number): Promise<void> => {
    try {
      const response = await fetch(`${base}/pts-api/event-config?brandId=${brandId}`, { credentials: 'omit' });
      const body = (await response.json()) as { events?: PtsEventConfig[] };
      if (response.ok && Array.isArray(body.events)) {
        session.write(configKey, { at: Date.now(), events: body.events });
        start(body.events);
        return;
      }
      if (response.status >= 400 && response.status < 500 && response.status !== 429) {
        warn(`event-config answered ${response.status}; automatic detection is off`, body);
        return resolveReady([]);
      }
    } catch {
      // offline or core-api down: fall through to the stored copy and a retry
    }
    const stored = session.read<{ at: number; events: PtsEventConfig[] } | undefined>(configKey, undefined);
    if (stored && Date.now() - stored.at < CONFIG_MAX_AGE_MS) return start(stored.events);
    // About four minutes of tries: longer than an outage a visitor waits out on one page.
    if (attempt >= CONFIG_ATTEMPTS) {
      warn(`could not load the event configuration from ${base}; automatic detection is off on this page`);
      return resolveReady([]);
    }
    setTimeout(() => void loadConfig(attempt + 1), Math.min(60_000, 1000 * 2 ** attempt));
  };

  // SPA navigations: pushState / replaceState / popstate / hashchange, all reported as the new URL.
  const navigated = () => {
    try {
      if (onNavigate) onNavigate(location.href);
      else if (visited[visited.length - 1] !== location.href) visited.push(location.href);
    } catch (error) {
      warn('navigation check failed', error);
    }
  };
  for (const method of ['pushState', 'replaceState'] as const) {
    const original = history[method];
    history[method] = function (this: History, ...args: Parameters<History['pushState']>) {
      const result = original.apply(this, args);
      navigated();
      return result;
    };
  }
  addEventListener('popstate', navigated);
  addEventListener('hashchange', navigated);
  addEventListener('online', () => delivery.resume(true));

  const api: PtsApi = {
    version: VERSION,
    track: (eventType, options = {}) => {
      try {
        if (!valid) return Promise.resolve(refused(eventType, 'pts is not configured: check data-brand-id'));
        if (typeof eventType !== 'string' || !EVENT_TYPE.test(eventType)) {
          return Promise.resolve(refused(eventType, 'eventType must be 1-50 letters, digits or underscores'));
        }
        const email = options.email?.trim() || user();
        if (options.email && !isEmailAddress(options.email.trim())) {
          return Promise.resolve(refused(eventType, `"${options.email}" is not an email address`));
        }
        const valueProblem = options.value === undefined ? undefined : problemOfValue(options.value);
        if (valueProblem) return Promise.resolve(refused(eventType, valueProblem));
        return send(eventType, 'manual', `manual:${options.id ?? ''}`, email, options.metadata, options.value).catch(
          (error) => {
            warn('track failed', error);
            return refused(eventType, 'internal error');
          },
        );
      } catch (error) {
        warn('track failed', error);
        return Promise.resolve(refused(eventType, 'internal error'));
      }
    },
    identify: (email) => {
      try {
        const value = String(email ?? '').trim();
        if (!isEmailAddress(value)) return warn(`identify: "${value}" is not an email address`);
        local.write(USER_KEY, value);
        delivery.identify(value);
      } catch (error) {
        warn('identify failed', error);
      }
    },
    reset: () => local.remove(USER_KEY),
    user: () => user(),
    on: (event, listener) => {
      const set = listeners[event] as Set<typeof listener> | undefined;
      if (!set || typeof listener !== 'function') return () => {};
      set.add(listener);
      return () => set.delete(listener);
    },
    push: (command) => {
      try {
        const [name, ...args] = command;
        const method = COMMANDS.includes(name) ? (api[name] as unknown) : undefined;
        if (typeof method === 'function') (method as (...a: unknown[]) => unknown)(...args);
        else warn(`unknown command ${String(name)}`);
      } catch (error) {
        warn('command failed', error);
      }
    },
    ready: () => ready,
  };

  const stub = existing as { q?: unknown } | undefined;
  const queued = (Array.isArray(existing) ? existing : Array.isArray(stub?.q) ? stub.q : []) as PtsCommand[];
  window.pts = api;
  for (const command of queued) api.push(command);
  if (!valid) {
    resolveReady([]);
    return;
  }
  delivery.resume();
  void loadConfig(0);
}

function refused(eventType: string, message: string): PtsTrackResult {
  warn(message);
  return { status: 'rejected', eventType: String(eventType), error: { status: 0, message } };
}

function findScript(): HTMLScriptElement | undefined {
  const current = document.currentScript;
  if (current instanceof HTMLScriptElement && current.hasAttribute('data-brand-id')) return current;
  return document.querySelector<HTMLScriptElement>('script[data-brand-id][src*="sdk.js"]') ?? undefined;
}

/** The page's URL for `sourceUrl`: without its fragment, and without its query when too long (2048 max). */
function sourceUrl(): string {
  const page = pageOf(location.href);
  return page.length <= 2048 ? page : (location.origin + location.pathname).slice(0, 2048);
}

function warn(message: string, detail?: unknown): void {
  try {
    console.warn(`[pts] ${message}`, ...(detail === undefined ? [] : [detail]));
  } catch {
    // no console
  }
}

try {
  boot();
} catch (error) {
  warn('failed to start', error);
}
