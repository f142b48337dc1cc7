import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

/** The built browser SDK as served: its bytes, gzipped bytes and strong ETags (one per representation). */
export interface SdkScript {
  code: Buffer;
  gzip: Buffer;
  etag: string;
  gzipEtag: string;
}

/**
 * The browser SDK, built from `@pts/sdk` once per process (on first use, or at start when `main.ts` warms
 * it) and kept in memory. A failed build is not kept: the next request tries again.
 */
export function createSdkScriptSource(build: () => Promise<string>): { load(): Promise<SdkScript> } {
  let loading: Promise<SdkScript> | undefined;
  return {
    load() {
      loading ??= build().then(
        (text) => {
          const code = Buffer.from(text, 'utf8');
          const hash = createHash('sha256').update(code).digest('base64url').slice(0, 27);
          return { code, gzip: gzipSync(code, { level: 9 }), etag: `"${hash}"`, gzipEtag: `"${hash}-gz"` };
        },
        (error: unknown) => {
          loading = undefined;
          throw error;
        },
      );
      return loading;
    },
  };
}
