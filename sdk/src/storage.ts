/** A JSON store over Web Storage that never throws: storage may be disabled, full or missing. */
export interface JsonStore {
  read<T>(key: string, fallback: T): T;
  write(key: string, value: unknown): void;
  remove(key: string): void;
}

/** `sessionStorage` (one tab, survives reloads) or `localStorage` (the site), with memory as the fallback. */
export function createJsonStore(kind: 'sessionStorage' | 'localStorage'): JsonStore {
  const memory = new Map<string, string>();
  const storage = (): Storage | undefined => {
    try {
      return window[kind];
    } catch {
      return undefined;
    }
  };
  return {
    read(key, fallback) {
      try {
        const raw = storage()?.getItem(key) ?? memory.get(key);
        return raw == null ? fallback : JSON.parse(raw);
      } catch {
        return fallback;
      }
    },
    write(key, value) {
      const raw = JSON.stringify(value);
      memory.set(key, raw);
      try {
        storage()?.setItem(key, raw);
      } catch {
        // quota or disabled storage: the memory copy serves this page
      }
    },
    remove(key) {
      memory.delete(key);
      try {
        storage()?.removeItem(key);
      } catch {
        // disabled storage
      }
    },
  };
}
