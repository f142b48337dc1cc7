import { AppError } from '@pts/shared';
import type { Request } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { SdkScript } from './sdk-script.ts';

export interface SdkRoutesDeps {
  sdk: { load(): Promise<SdkScript> };
  logger: Logger;
  /** `Cache-Control` max-age: how long a brand's pages use their copy before revalidating with the ETag. */
  maxAgeSeconds: number;
}

/**
 * `GET /sdk.js` (spec 1 item 6, 4.12): the browser SDK, gzipped when the browser accepts it, with a strong
 * ETag (a 304 answers a matching `If-None-Match`) so revalidation after `max-age` costs no body.
 */
export function sdkRoutes(deps: SdkRoutesDeps): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/sdk.js',
      summary: 'The browser SDK: `<script src="{base_url}/sdk.js" data-brand-id="0x…" async>` (docs/sdk.md)',
      tags: ['sdk'],
      responses: {
        200: {
          description:
            'The script; gzipped when accepted; `ETag` and ' +
            `\`Cache-Control: public, max-age=${deps.maxAgeSeconds}\``,
          schema: z.string(),
          contentType: 'application/javascript',
        },
        304: { description: '`If-None-Match` matched the current ETag' },
        503: failure('The SDK failed to build on this instance (see its logs)'),
      },
      handle: async ({ req, res }) => {
        let script: SdkScript;
        try {
          script = await deps.sdk.load();
        } catch (error) {
          deps.logger.error({ err: error }, 'the browser SDK failed to build');
          throw new AppError('SERVICE_UNAVAILABLE', 'The browser SDK is not available on this instance; see its logs');
        }
        const gzip = acceptsGzip(req);
        const etag = gzip ? script.gzipEtag : script.etag;
        res.setHeader('Content-Type', 'application/javascript; charset=utf-8');
        res.setHeader('Cache-Control', `public, max-age=${deps.maxAgeSeconds}`);
        res.setHeader('ETag', etag);
        res.vary('Accept-Encoding');
        // Brands load it from their own pages: let any site embed the script.
        res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
        if (matchesIfNoneMatch(req.headers['if-none-match'], [script.etag, script.gzipEtag])) {
          res.status(304).end();
          return undefined;
        }
        const body = gzip ? script.gzip : script.code;
        if (gzip) res.setHeader('Content-Encoding', 'gzip');
        res.setHeader('Content-Length', String(body.length));
        res.end(req.method === 'HEAD' ? undefined : body);
        return undefined;
      },
    }),
  ];
}

/** Whether `Accept-Encoding` lists `gzip` (or `*`) with a non-zero quality. */
function acceptsGzip(req: Request): boolean {
  const header = req.headers['accept-encoding'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((entry) => {
    const [coding = '', ...params] = entry.split(';').map((part) => part.trim().toLowerCase());
    const quality = params.find((param) => param.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (quality === undefined || Number(quality.slice(2)) > 0);
  });
}

/** `If-None-Match` (a list, or `*`) against the script's ETags; a `W/` prefix compares weakly (RFC 9110 13.1.2). */
function matchesIfNoneMatch(header: string | undefined, etags: string[]): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => etags.includes(tag.trim().replace(/^W\//, '')));
}
