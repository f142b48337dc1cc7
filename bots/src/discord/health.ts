import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Client, Status } from 'discord.js';
import { listenOrExplain } from '../health.ts';

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/** The gateway state as a word for `/health`. */
export function gatewayStatus(client: Client): string {
  return (Status[client.ws.status] ?? 'Unknown').toLowerCase();
}

/**
 * `GET /health`: 200 `{status:'ok', gateway:'ready', ...}` while the gateway session is ready, 503 with the
 * gateway state otherwise (connecting, reconnecting, disconnected).
 */
export async function startHealthServer(client: Client, port: number, host = '0.0.0.0'): Promise<HealthServer> {
  const server: Server = createServer((request, response) => {
    if (request.method !== 'GET' || (request.url ?? '').split('?')[0] !== '/health') {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ success: false, error: 'Not found: use GET /health', code: 'NOT_FOUND' }));
      return;
    }
    const ready = client.isReady() && client.ws.status === Status.Ready;
    response.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        status: ready ? 'ok' : 'unavailable',
        platform: 'discord',
        gateway: gatewayStatus(client),
        ping: client.ws.ping,
        guilds: client.guilds.cache.size,
        user: client.user?.tag ?? null,
      }),
    );
  });
  await listenOrExplain(server, port, 'HEALTH_PORT', host);
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
