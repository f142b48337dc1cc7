import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One chat-completions request the fake received. */
export interface ChatCompletionRequest {
  authorization: string | undefined;
  model: string;
  messages: { role: string; content: string }[];
  responseFormat: unknown;
}

/** What the fake answers to one request: the assistant's content, or an HTTP error. */
export type ChatResponder = (request: ChatCompletionRequest) => { content: string } | { status: number; body?: string };

/**
 * A local OpenAI-compatible endpoint on 127.0.0.1 speaking the real wire format: `POST /v1/chat/completions`
 * with `{model, messages, …}` and a Bearer key, answering `{id, object: "chat.completion", created, model,
 * choices: [{index, message: {role: "assistant", content}, finish_reason}], usage}`. Tests script the
 * content per request (`respond`) and read what was sent (`requests`).
 */
export interface FakeOpenAi {
  /** Base URL up to the version, as PTS_LLM_BASE_URL takes it: `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  apiKey: string;
  requests: ChatCompletionRequest[];
  respond: ChatResponder;
  close(): Promise<void>;
}

export async function startFakeOpenAi(apiKey = 'sk-test-fake-0123456789'): Promise<FakeOpenAi> {
  let server: Server;
  const fake: FakeOpenAi = {
    baseUrl: '',
    apiKey,
    requests: [],
    respond: () => ({ content: '{"calls":[]}' }),
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
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        send(404, { error: { message: `Unknown path ${req.url}`, type: 'invalid_request_error' } });
        return;
      }
      if (req.headers.authorization !== `Bearer ${fake.apiKey}`) {
        send(401, {
          error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
        });
        return;
      }
      let body: { model?: unknown; messages?: unknown; response_format?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        send(400, {
          error: { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error' },
        });
        return;
      }
      if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
        send(400, { error: { message: "'model' and 'messages' are required", type: 'invalid_request_error' } });
        return;
      }
      const request: ChatCompletionRequest = {
        authorization: req.headers.authorization,
        model: body.model,
        messages: body.messages as ChatCompletionRequest['messages'],
        responseFormat: body.response_format,
      };
      fake.requests.push(request);
      const answer = fake.respond(request);
      if ('status' in answer) {
        send(answer.status, answer.body ?? { error: { message: 'scripted failure', type: 'server_error' } });
        return;
      }
      send(200, {
        id: `chatcmpl-${fake.requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        choices: [{ index: 0, message: { role: 'assistant', content: answer.content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}
