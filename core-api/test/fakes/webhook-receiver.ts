import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as received. */
  body: string;
  at: number;
}

/** What the receiver answers; may wait before answering (a slow receiver). */
export type WebhookResponder = (request: ReceivedWebhook) => { status: number; delayMs?: number; body?: string };

/** A brand's webhook receiver on 127.0.0.1 (port 0), recording every request and answering as told. */
export interface FakeWebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Requests being handled right now, and the most at once. */
  inFlight: number;
  maxInFlight: number;
  respond: WebhookResponder;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  respond: WebhookResponder = () => ({ status: 200 }),
): Promise<FakeWebhookReceiver> {
  let server: Server;
  const receiver: FakeWebhookReceiver = {
    url: '',
    received: [],
    inFlight: 0,
    maxInFlight: 0,
    respond,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedWebhook = {
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      receiver.received.push(request);
      receiver.inFlight += 1;
      receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight);
      const answer = receiver.respond(request);
      const timer = setTimeout(() => {
        receiver.inFlight -= 1;
        if (res.destroyed) return;
        res.writeHead(answer.status, { 'content-type': 'text/plain' });
        res.end(answer.body ?? '');
      }, answer.delayMs ?? 0);
      res.on('close', () => {
        if (!res.writableFinished) {
          clearTimeout(timer);
          receiver.inFlight -= 1;
        }
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
