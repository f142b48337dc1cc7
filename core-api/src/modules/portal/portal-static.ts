import { existsSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { PRECOMPRESSED_ENCODINGS } from '@pts/portal/precompress';
import express, { type RequestHandler, Router } from 'express';

/**
 * The portal's pages: a strict Content-Security-Policy (scripts and styles from the portal's own files only,
 * no inline script, never framed), on every /portal answer including the JSON API.
 */
/** Every page path under /portal but the JSON API's: index.html answers them all. */
export const PORTAL_PAGE_PATHS = /^\/(?!api(\/|$)).*/;

export const PORTAL_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const portalSecurityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', PORTAL_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
};

/**
 * Serves the built portal from `distDir`: hashed files under /portal/assets for a year (immutable), and
 * index.html for every other page path (the app routes in the browser), never cached so a new build is
 * picked up at once. Without a build, the pages answer 503 saying how to make one.
 */
export function portalStaticRouter(distDir: string): Router {
  const router = Router();
  router.use(
    '/assets',
    servePrecompressed(join(distDir, 'assets')),
    express.static(join(distDir, 'assets'), {
      immutable: true,
      maxAge: '365d',
      index: false,
    }),
    // An old or mistyped asset name: a plain 404, never the page (a script tag would parse HTML as code).
    (_req, res) => {
      res.status(404).type('text/plain').send('No such portal asset');
    },
  );
  let indexHtml: string | undefined;
  router.get(PORTAL_PAGE_PATHS, (_req, res) => {
    indexHtml ??= existsSync(join(distDir, 'index.html'))
      ? readFileSync(join(distDir, 'index.html'), 'utf8')
      : undefined;
    res.setHeader('Cache-Control', 'no-cache');
    if (!indexHtml) {
      res
        .status(503)
        .type('text/plain')
        .send('The portal is not built: run `npm start` (it builds it) or `npm run build -w portal`.');
      return;
    }
    res.type('html').send(indexHtml);
  });
  return router;
}

/** A hashed asset's name as Vite writes it: one path segment, no dot-dot, no slash. */
const ASSET_NAME = /^\/[\w-]+(\.[\w-]+)+$/;

/** The content codings the request accepts (those not refused with `q=0`), lower-cased. */
export function acceptedEncodings(header: string | undefined): Set<string> {
  const accepted = new Set<string>();
  for (const part of (header ?? '').split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((param) => param.trim()).find((param) => param.startsWith('q='));
    if (name && !(q && Number(q.slice(2)) === 0)) accepted.add(name.trim());
  }
  return accepted;
}

/**
 * Serves the build's `.br` or `.gz` twin of an asset when the browser accepts it (brotli first: smaller), with
 * the asset's own Content-Type and `Vary: Accept-Encoding`; express.static then sends that file with its ETag
 * and the year-long immutable caching. The compression middleware leaves an answer that has a
 * Content-Encoding alone, so nothing is compressed twice.
 */
function servePrecompressed(assetsDir: string): RequestHandler {
  return (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !ASSET_NAME.test(req.path)) return next();
    const file = join(assetsDir, req.path);
    const twins = PRECOMPRESSED_ENCODINGS.filter(({ suffix }) => existsSync(`${file}${suffix}`));
    if (twins.length === 0 || !existsSync(file)) return next();
    res.vary('Accept-Encoding');
    const accepted = acceptedEncodings(req.headers['accept-encoding']);
    const twin = twins.find(({ encoding }) => accepted.has(encoding));
    if (!twin) return next();
    res.type(extname(req.path));
    res.setHeader('Content-Encoding', twin.encoding);
    req.url = `${req.path}${twin.suffix}`;
    next();
  };
}
