import compression from 'compression';
import type { RequestHandler } from 'express';

/** Answers smaller than this go as they are: below ~1 KB the coding's overhead outweighs what it saves. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * Compresses every compressible answer (JSON, HTML, JavaScript, CSS, text) above the threshold with brotli or
 * gzip, as the request's Accept-Encoding allows (brotli first), and says `Vary: Accept-Encoding`. Brotli runs at
 * quality 4 here (fast enough per request); the portal's assets were compressed at build time at the strongest
 * settings and pass through untouched (they already carry a Content-Encoding). Server-sent events are never
 * buffered for compression: each event must reach the client when it is written.
 */
export function compressResponses(): RequestHandler {
  return compression({
    threshold: COMPRESSION_THRESHOLD_BYTES,
    filter: (req, res) => {
      const type = String(res.getHeader('Content-Type') ?? '');
      if (type.startsWith('text/event-stream')) return false;
      return compression.filter(req, res);
    },
  });
}
