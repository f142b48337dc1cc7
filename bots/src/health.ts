import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** What `/health` reports: a platform adapter's state. */
export interface HealthState {
  platform: string;
  /** The adapter is connected (polling loop running, webhook registered, gateway ready). */
  ready(): boolean;
  startedAt: Date;
  /** What the adapter is still waiting for (an unreachable platform API), when it waits. */
  waitingFor?(): string | undefined;
}

/**
 * Answers `GET /health` (200 when ready, 503 otherwise) and returns true; false for other paths so the caller
 * can serve them (the Telegram webhook shares the server).
 */
export function handleHealth(state: HealthState, req: IncomingMessage, res: ServerResponse): boolean {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/health' || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const ready = state.ready();
  const waitingFor = ready ? undefined : state.waitingFor?.();
  res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      status: ready ? 'ok' : waitingFor ? 'waiting' : 'starting',
      platform: state.platform,
      ...(waitingFor ? { waitingFor } : {}),
      uptimeSeconds: Math.round((Date.now() - state.startedAt.getTime()) / 1000),
    }),
  );
  return true;
}

/**
 * Listens on `port`; a port already taken (another bot, another program) is one sentence naming the variable
 * to change, not a stack trace.
 */
export function listenOrExplain(server: Server, port: number, variable: string, host?: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(
          new Error(
            `Port ${port} is already in use (another bot or program listens there): set ${variable} to a free port`,
          ),
        );
      } else if (error.code === 'EACCES') {
        reject(new Error(`Port ${port} needs privileges this process lacks: set ${variable} to a port above 1023`));
      } else reject(error);
    };
    server.once('error', onError);
    const done = () => {
      server.off('error', onError);
      resolve();
    };
    if (host === undefined) server.listen(port, done);
    else server.listen(port, host, done);
  });
}
