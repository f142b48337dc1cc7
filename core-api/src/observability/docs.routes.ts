import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Router } from 'express';
import type { ApiDocs, DocumentInfo } from './openapi.ts';

/** Directory of the installed swagger-ui-dist: served from disk, never from a CDN (machines may be offline). */
export function swaggerUiDirectory(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/** The only swagger-ui-dist files the page needs; nothing else in the package directory is reachable. */
export const SWAGGER_UI_ASSETS = [
  'swagger-ui.css',
  'index.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-16x16.png',
  'favicon-32x32.png',
] as const;

const ASSET_MAX_AGE_MS = 24 * 60 * 60 * 1000;

export interface DocsRouterOptions {
  docs: ApiDocs;
  info: DocumentInfo;
}

/**
 * `GET /openapi.json` (generated from the registered zod schemas) and `GET /docs` (Swagger UI).
 * Asset URLs are built from `req.baseUrl`, so the pages work wherever the router is mounted.
 */
export function createDocsRouter({ docs, info }: DocsRouterOptions): Router {
  const assetRoot = swaggerUiDirectory();
  const allowed = new Set<string>(SWAGGER_UI_ASSETS);
  let cached: Record<string, unknown> | undefined;
  const router = Router();

  router.get('/openapi.json', (_req, res) => {
    // Routes register at start-up, before the first request; build once.
    cached ??= docs.document(info);
    res.json(cached);
  });

  router.get('/docs', (req, res) => {
    const base = req.baseUrl;
    res
      .type('html')
      .setHeader('Cache-Control', 'no-cache')
      .send(`<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>${escapeHtml(info.title)} — API reference</title>
    <link rel="stylesheet" type="text/css" href="${base}/docs/swagger-ui.css">
    <link rel="stylesheet" type="text/css" href="${base}/docs/index.css">
    <link rel="icon" type="image/png" href="${base}/docs/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="${base}/docs/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${base}/docs/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="${base}/docs/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script src="${base}/docs/swagger-initializer.js" charset="UTF-8"></script>
  </body>
</html>
`);
  });

  // Our own initializer (an external file, so a strict Content-Security-Policy needs no 'unsafe-inline').
  router.get('/docs/swagger-initializer.js', (req, res) => {
    const specUrl = JSON.stringify(`${req.baseUrl}/openapi.json`);
    res
      .type('application/javascript')
      .setHeader('Cache-Control', 'no-cache')
      .send(`window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: ${specUrl},
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
    validatorUrl: null,
  });
};
`);
  });

  router.get('/docs/:asset', (req, res, next) => {
    const asset = req.params.asset;
    if (!allowed.has(asset)) return next();
    res.sendFile(asset, { root: assetRoot, maxAge: ASSET_MAX_AGE_MS });
  });

  return router;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
