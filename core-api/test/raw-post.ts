import { request as httpRequest } from 'node:http';

/**
 * POSTs JSON to `baseUrl` + `path` with headers fetch will not send as given (a hostile `Host`, `X-Forwarded-*`):
 * what a client that chose every header sends, to prove links never come from them.
 */
export function postWithHeaders(baseUrl: string, path: string, body: unknown, headers: Record<string, string>) {
  const url = new URL(path, baseUrl);
  const data = JSON.stringify(body);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}
