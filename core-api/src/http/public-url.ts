import type { Request } from 'express';

/**
 * The base of every absolute link this service hands out (invite and reset links, snippets, checkout pages and
 * returns): `PTS_PUBLIC_URL`, else the address this connection reached the server on (the listening socket's own
 * address and port, e.g. `http://127.0.0.1:3000`). Never the `Host` or `X-Forwarded-*` headers: whoever sends the
 * request writes those, and a link built from them carries its token or its buyer to their site (issue 33 §5).
 * Behind a proxy, set `PTS_PUBLIC_URL`.
 */
export function publicBaseUrl(req: Request, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl;
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  return `http://${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort}`;
}
