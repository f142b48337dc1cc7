/**
 * Types of the pts browser SDK (`<script src="{base_url}/sdk.js" data-brand-id="0x…" async>`).
 * The script defines `window.pts`; this file types it for a brand's own TypeScript.
 */

/** How a rule is detected in the browser (spec 2.3). */
export type DetectionMethod = 'manual' | 'url_pattern' | 'form_auto' | 'sdk_auto';

/** One item of `GET /pts-api/event-config` (spec 2.3). */
export interface PtsEventConfig {
  eventId: string;
  eventType: string;
  /** The fixed reward; 0 for a rate rule. */
  rewardAmount: number;
  /** A rate rule: `pts` per `per` of the event's value (send `value` with `pts.track`). */
  rate?: PtsRate;
  /** With a rate: events worth less earn nothing. */
  minValue?: string;
  /** With a rate: the most one event pays. */
  maxReward?: number;
  maxClaims: number;
  cooldownHours: number;
  detectionMethod: DetectionMethod;
  detectionConfig: { urlPatterns?: string[]; successSelectors?: string[]; channels?: string[] };
  isCustom: boolean;
}

/** A rate rule's rate: `{pts: 2, per: "1.00", currency: "USD"}` pays 2 pts per $1 of the event's value. */
export interface PtsRate {
  pts: number;
  per: string;
  currency: string;
  rounding?: 'down' | 'nearest' | 'up';
}

/**
 * What an event is worth (an order's total): `amount` is a decimal string with at most the currency's minor
 * units ("12.50"; never a number, so nothing is rounded), `currency` the brand's ISO 4217 code.
 */
export interface PtsValue {
  amount: string;
  currency: string;
}

/** Options of `pts.track`. */
export interface PtsTrackOptions {
  /** The user's email; defaults to the one given to `pts.identify`. */
  email?: string;
  /** Free-form values stored with the event (`metadata`). */
  metadata?: Record<string, string | number | boolean | null>;
  /**
   * What makes this occurrence distinct. The SDK sends an event type once per user and tab session; give
   * a different `id` (an order number, say) for each occurrence that should count on its own.
   */
  id?: string;
  /** The event's value: a rate rule pays by it (`{amount: "12.50", currency: "USD"}`). */
  value?: PtsValue;
}

/**
 * What became of a tracked event:
 * - `sent`: core-api accepted it (`response` is its event response, with `rewardAmount`);
 * - `queued`: core-api could not be reached (offline, 5xx, rate limited); it is kept in the tab's
 *   sessionStorage and sent when possible, so a reload does not lose it;
 * - `duplicate`: already sent in this session (or core-api had it already);
 * - `rejected`: core-api refused it for good (cooldown, max claims, unknown event type…); `error` says why;
 * - `waiting`: no email is known yet; it is sent as soon as `pts.identify` gives one.
 */
export interface PtsTrackResult {
  status: 'sent' | 'queued' | 'duplicate' | 'rejected' | 'waiting';
  eventType: string;
  response?: PtsEventResponse;
  error?: { status: number; code?: string; message: string };
}

/** core-api's answer to an accepted event (spec 2.2). */
export interface PtsEventResponse {
  success: boolean;
  eventId: string;
  message: string;
  rewardAmount: number;
  /** The value the reward was computed on, as core-api recorded it. */
  value?: PtsValue;
  eventType: string;
  walletAddress: string;
  transactionHash?: string;
  [key: string]: unknown;
}

/** Events `pts.on` can listen to. */
export interface PtsEventMap {
  /** An event core-api accepted (a reward, possibly of 0). */
  reward: PtsEventResponse;
  /** An event core-api refused for good. */
  rejected: { eventType: string; status: number; code?: string; message: string };
}

/** A call recorded before the script loaded: `['track', 'newsletter_subscribe', { email }]`. */
export type PtsCommand =
  | ['track', string, PtsTrackOptions?]
  | ['identify', string]
  | ['reset']
  | ['on', keyof PtsEventMap, (detail: never) => void];

/** `window.pts` once the script has loaded. No method throws. */
export interface PtsApi {
  /** Sends `eventType` for the user (`options.email` or the identified one). Never rejects. */
  track(eventType: string, options?: PtsTrackOptions): Promise<PtsTrackResult>;
  /** Remembers the user's email in localStorage for this site; later events are theirs. */
  identify(email: string): void;
  /** Forgets the identified user. */
  reset(): void;
  /** The identified email, if any. */
  user(): string | undefined;
  /** Calls `listener` on each `reward` or `rejected` event; returns a function that stops it. */
  on<K extends keyof PtsEventMap>(event: K, listener: (detail: PtsEventMap[K]) => void): () => void;
  /** Runs a queued command; calls made through `window.pts.push` before load keep working after. */
  push(command: PtsCommand): void;
  /** Resolves with the brand's event configuration once loaded (an empty list if it cannot be). */
  ready(): Promise<PtsEventConfig[]>;
  /** The SDK's version. */
  readonly version: string;
}

declare global {
  interface Window {
    /** Before load, an array of commands (`window.pts = window.pts || []`); after load, the API. */
    pts: PtsApi | PtsCommand[];
  }
}
