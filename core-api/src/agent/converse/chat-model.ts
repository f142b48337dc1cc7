import { z } from 'zod';

/** One message of an OpenAI-compatible chat completion. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** A chat-completions model: the text of its first choice. */
export interface ChatModel {
  /** The model's name, reported in `basis.model`. */
  readonly model: string;
  complete(messages: ChatMessage[], options?: { json?: boolean }): Promise<string>;
}

export interface ChatModelOptions {
  /** Up to the version: `https://api.openai.com/v1`; `/chat/completions` is appended. */
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

const completionSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable().optional() }) })).min(1),
});

/** A failure of the model endpoint; its message never contains the API key. */
export class ChatModelError extends Error {
  override readonly name = 'ChatModelError';
}

/**
 * An OpenAI-compatible `POST {base}/chat/completions` client (OpenAI, Azure-compatible gateways, vLLM,
 * Ollama, llama.cpp server…). The URL is the operator's own configuration, so it is not passed through the
 * SSRF guard; the key goes only in the Authorization header and is never part of an error or a log line.
 */
export function createChatModel(options: ChatModelOptions): ChatModel {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const fetchImpl = options.fetch ?? globalThis.fetch;
  return {
    model: options.model,
    async complete(messages, { json = false } = {}) {
      let response: Response;
      try {
        response = await fetchImpl(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${options.apiKey}` },
          body: JSON.stringify({
            model: options.model,
            messages,
            temperature: 0,
            ...(json ? { response_format: { type: 'json_object' } } : {}),
          }),
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      } catch (error) {
        const reason = error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : 'unreachable';
        throw new ChatModelError(`The model endpoint ${reason}`);
      }
      const text = await response.text();
      if (!response.ok) throw new ChatModelError(`The model endpoint answered HTTP ${response.status}`);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new ChatModelError('The model endpoint answered with something that is not JSON');
      }
      const parsed = completionSchema.safeParse(body);
      if (!parsed.success) throw new ChatModelError('The model endpoint answered without choices[0].message');
      return parsed.data.choices[0]?.message.content ?? '';
    },
  };
}

/** The model configured by PTS_LLM_* (all three set), or undefined: the offline planner answers. */
export function chatModelFromConfig(
  config: {
    PTS_LLM_BASE_URL?: string | undefined;
    PTS_LLM_API_KEY?: string | undefined;
    PTS_LLM_MODEL?: string | undefined;
    PTS_LLM_TIMEOUT_MS: number;
  },
  fetchImpl?: typeof fetch,
): ChatModel | undefined {
  if (!config.PTS_LLM_BASE_URL || !config.PTS_LLM_API_KEY || !config.PTS_LLM_MODEL) return undefined;
  return createChatModel({
    baseUrl: config.PTS_LLM_BASE_URL,
    apiKey: config.PTS_LLM_API_KEY,
    model: config.PTS_LLM_MODEL,
    timeoutMs: config.PTS_LLM_TIMEOUT_MS,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
}
