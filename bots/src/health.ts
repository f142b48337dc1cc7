import type { IncomingMessage, ServerResponse } from 'node:http';

/** What `/health` reports: a platform adapter's state. */
export interface HealthState {
  platform: string;
  /** The adapter is connected (polling loop running, webhook registered, gateway ready). */
  ready(): boolean;
  startedAt: Date;
}

/**
 * Answers `GET /health` (200 when ready, 503 otherwise) and returns true; false for other paths so the caller
 * can serve them (the Telegram webhook shares the server).
 */
export function handleHealth(state: HealthState, req: IncomingMessage, res: ServerResponse): boolean {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/health' || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const ready = state.ready();
  res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      status: ready ? 'ok' : 'starting',
      platform: state.platform,
      uptimeSeconds: Math.round((Date.now() - state.startedAt.getTime()) / 1000),
    }),
  );
  return true;
}
