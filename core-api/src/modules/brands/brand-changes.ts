/** What changed: a brand's own fields (name, domain, automation) or its event rules. */
export type BrandChange = { kind: 'brand'; brandId: string } | { kind: 'rules'; brandId: string };

export type BrandChangeListener = (change: BrandChange) => void;

/** Tells caches (event handler rules, event-config, CORS domains) that a brand was written. */
export interface ChangeNotifier {
  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: BrandChangeListener): () => void;
  /** Calls every listener; called by the brands service after its transaction committed. */
  emit(change: BrandChange): void;
}

export interface ChangeNotifierOptions {
  /** Receives a listener's exception; the default writes it to stderr. */
  onListenerError?: (error: unknown, change: BrandChange) => void;
}

/** An in-process publish/subscribe of brand changes. */
export function createChangeNotifier(options: ChangeNotifierOptions = {}): ChangeNotifier {
  const listeners = new Set<BrandChangeListener>();
  const onListenerError =
    options.onListenerError ??
    ((error: unknown, change: BrandChange) => {
      console.error(`brand change listener failed for ${change.kind} ${change.brandId}:`, error);
    });
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    emit(change) {
      // The write has already committed: a failing cache listener must neither fail the admin request
      // nor keep the other listeners from hearing about the change.
      for (const listener of [...listeners]) {
        try {
          listener(change);
        } catch (error) {
          onListenerError(error, change);
        }
      }
    },
  };
}
