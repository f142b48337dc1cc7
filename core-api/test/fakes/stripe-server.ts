import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A Checkout Session as the fake keeps it (the fields of Stripe's object that pts reads, and a few more). */
export interface FakeCheckoutSession {
  id: string;
  object: 'checkout.session';
  mode: string;
  status: 'open' | 'complete' | 'expired';
  payment_status: 'paid' | 'unpaid' | 'no_payment_required';
  amount_total: number;
  currency: string;
  customer_email: string | null;
  client_reference_id: string | null;
  success_url: string;
  cancel_url: string;
  metadata: Record<string, string>;
  payment_intent: string | null;
  url: string;
  created: number;
  livemode: false;
}

export interface FakeStripeRequest {
  method: string;
  path: string;
  form: Record<string, unknown>;
}

export interface FakeStripeServer {
  /** Host and port the real `stripe` client is pointed at (`PTS_STRIPE_HOST`, `PTS_STRIPE_PORT`, protocol http). */
  host: string;
  port: number;
  url: string;
  secretKey: string;
  sessions: Map<string, FakeCheckoutSession>;
  /** Every API request received, in order. */
  requests: FakeStripeRequest[];
  /** Test control (also `POST /__test/sessions/:id/pay`): the buyer paid. */
  markPaid(id: string): FakeCheckoutSession;
  /** Test control: a session that was not created through the API (e.g. by another integration). */
  addSession(session: Partial<FakeCheckoutSession> & { id: string }): FakeCheckoutSession;
  /** While true every API call answers 503 like a Stripe outage. */
  failing: boolean;
  close(): Promise<void>;
}

/**
 * Decodes Stripe's form encoding (`metadata[wallet]=…`, `line_items[0][price_data][unit_amount]=…`) into
 * nested objects; array indexes become object keys.
 */
export function parseStripeForm(body: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.split(/\[|\]\[|\]/).filter((part) => part !== '');
    let node = root;
    for (const [index, part] of path.entries()) {
      if (index === path.length - 1) node[part] = value;
      else {
        node[part] ??= {};
        node = node[part] as Record<string, unknown>;
      }
    }
  }
  return root;
}

function stripeError(res: ServerResponse, status: number, type: string, message: string, extra: object = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(6).toString('hex')}` });
  res.end(JSON.stringify({ error: { type, message, ...extra } }));
}

function send(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(6).toString('hex')}` });
  res.end(JSON.stringify(body));
}

/**
 * A local Stripe API speaking the real wire protocol for the calls pts makes, so the real `stripe` client runs
 * against it: `POST /v1/checkout/sessions`, `GET /v1/checkout/sessions/:id`, bearer-key authentication.
 */
export async function startFakeStripe(options: { secretKey?: string } = {}): Promise<FakeStripeServer> {
  const secretKey = options.secretKey ?? `sk_test_${randomBytes(12).toString('hex')}`;
  const sessions = new Map<string, FakeCheckoutSession>();
  const requests: FakeStripeRequest[] = [];
  let baseUrl = '';

  const markPaid = (id: string) => {
    const session = sessions.get(id);
    if (!session) throw new Error(`fake stripe: no session ${id}`);
    session.status = 'complete';
    session.payment_status = 'paid';
    session.payment_intent ??= `pi_${randomBytes(12).toString('hex')}`;
    return session;
  };

  const fake: FakeStripeServer = {
    host: '127.0.0.1',
    port: 0,
    url: '',
    secretKey,
    sessions,
    requests,
    markPaid,
    failing: false,
    addSession(partial) {
      const session: FakeCheckoutSession = {
        object: 'checkout.session',
        mode: 'payment',
        status: 'open',
        payment_status: 'unpaid',
        amount_total: 0,
        currency: 'usd',
        customer_email: null,
        client_reference_id: null,
        success_url: 'https://example.com/success',
        cancel_url: 'https://example.com/cancel',
        metadata: {},
        payment_intent: null,
        url: `${baseUrl}/pay/${partial.id}`,
        created: Math.floor(Date.now() / 1000),
        livemode: false,
        ...partial,
      };
      sessions.set(session.id, session);
      return session;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    const form = parseStripeForm(body);
    const control = /^\/__test\/sessions\/([^/]+)\/pay$/.exec(path);
    if (control && req.method === 'POST') {
      const id = decodeURIComponent(control[1]!);
      if (!sessions.has(id)) return stripeError(res, 404, 'invalid_request_error', `No such session ${id}`);
      return send(res, markPaid(id));
    }
    requests.push({ method: req.method ?? 'GET', path, form });
    if (req.headers.authorization !== `Bearer ${secretKey}`) {
      return stripeError(res, 401, 'invalid_request_error', 'Invalid API Key provided');
    }
    if (fake.failing) return stripeError(res, 503, 'api_error', 'Stripe is having a bad day');

    if (req.method === 'POST' && path === '/v1/checkout/sessions') {
      const lineItems = (form.line_items ?? {}) as Record<string, Record<string, unknown>>;
      let amountTotal = 0;
      let currency = 'usd';
      for (const item of Object.values(lineItems)) {
        const price = (item.price_data ?? {}) as Record<string, string>;
        amountTotal += Number(price.unit_amount ?? 0) * Number(item.quantity ?? 1);
        currency = price.currency ?? currency;
      }
      if (!form.success_url || amountTotal <= 0) {
        return stripeError(res, 400, 'invalid_request_error', 'Missing required param: success_url or line_items', {
          code: 'parameter_missing',
        });
      }
      const id = `cs_test_${randomBytes(16).toString('hex')}`;
      const session = fake.addSession({
        id,
        amount_total: amountTotal,
        currency,
        customer_email: (form.customer_email as string | undefined) ?? null,
        client_reference_id: (form.client_reference_id as string | undefined) ?? null,
        success_url: form.success_url as string,
        cancel_url: (form.cancel_url as string | undefined) ?? '',
        metadata: (form.metadata ?? {}) as Record<string, string>,
      });
      return send(res, session);
    }
    const retrieve = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && retrieve) {
      const id = decodeURIComponent(retrieve[1]!);
      const session = sessions.get(id);
      if (!session) {
        return stripeError(res, 404, 'invalid_request_error', `No such checkout.session: '${id}'`, {
          code: 'resource_missing',
          param: 'session',
        });
      }
      return send(res, session);
    }
    stripeError(res, 404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${path})`);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.port = (server.address() as AddressInfo).port;
  fake.url = `http://127.0.0.1:${fake.port}`;
  baseUrl = fake.url;
  return fake;
}

/** The environment that points core-api's real Stripe client at the fake. */
export function fakeStripeEnv(fake: FakeStripeServer, webhookSecret: string): Record<string, string> {
  return {
    PTS_STRIPE_SECRET_KEY: fake.secretKey,
    PTS_STRIPE_WEBHOOK_SECRET: webhookSecret,
    PTS_STRIPE_HOST: fake.host,
    PTS_STRIPE_PORT: String(fake.port),
    PTS_STRIPE_PROTOCOL: 'http',
  };
}
