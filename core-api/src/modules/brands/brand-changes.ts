/**
 * What changed: a brand's own fields (name, domain, automation) or its event rules; `all` when changes may
 * have been missed (another process's notices lost while the connection that hears them was down).
 */
export type BrandChange =
  | { kind: 'brand'; brandId: string }
  | { kind: 'rules'; brandId: string }
  | { kind: 'all'; brandId?: undefined };

export type BrandChangeListener = (change: BrandChange) => void;

/** Tells caches (event handler rules, event-config, CORS domains) that a brand was written. */
export interface ChangeNotifier {
  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: BrandChangeListener): () => void;
  /**
   * Calls every listener of this process, then tells the other processes (when a transport is set); called
   * by the brands service after its transaction committed.
   */
  emit(change: BrandChange): void;
}

/** Carries changes between the processes that share a database (brand-changes.postgres.ts). */
export interface ChangeTransport {
  /** Sends a change made in this process to the others; never throws (failures go to its own log). */
  publish(change: BrandChange): void;
  /** Starts hearing the other processes' changes; resolves once it listens. */
  start(deliver: (change: BrandChange) => void): Promise<void>;
  stop(): Promise<void>;
}

export interface ChangeNotifierOptions {
  /** Receives a listener's exception; the default writes it to stderr. */
  onListenerError?: (error: unknown, change: BrandChange) => void;
  /** Other processes on the same database (PostgreSQL LISTEN/NOTIFY); none on single-process PGlite. */
  transport?: ChangeTransport;
}

export interface StartableChangeNotifier extends ChangeNotifier {
  /** Starts the transport (if any): from then on other processes' changes reach this process's listeners. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A publish/subscribe of brand changes in this process, and across processes through `transport`. */
export function createChangeNotifier(options: ChangeNotifierOptions = {}): StartableChangeNotifier {
  const listeners = new Set<BrandChangeListener>();
  const onListenerError =
    options.onListenerError ??
    ((error: unknown, change: BrandChange) => {
      console.error(`brand change listener failed for ${change.kind} ${change.brandId ?? ''}:`, error);
    });
  const deliver = (change: BrandChange) => {
    // The write has already committed: a failing cache listener must neither fail the admin request
    // nor keep the other listeners from hearing about the change.
    for (const listener of [...listeners]) {
      try {
        listener(change);
      } catch (error) {
        onListenerError(error, change);
      }
    }
  };
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    emit(change) {
      deliver(change);
      options.transport?.publish(change);
    },
    start: async () => options.transport?.start(deliver),
    stop: async () => options.transport?.stop(),
  };
}
