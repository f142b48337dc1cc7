import { type PortalSession, portalSessionSchema } from '@pts/shared/schemas/portal';
import { z } from 'zod';
import { UnexpectedAnswer } from './errors/describe.ts';

/** A refused request: the server's message, code and (for validation) the field errors to show inline. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly details: Record<string, unknown> | undefined,
  ) {
    super(message);
  }
}

let csrfToken = '';

/** A refusal's body (docs/errors.md): each part read when it is there, whatever else the body holds. */
const refusalSchema = z.object({
  error: z.string().optional().catch(undefined),
  code: z.string().optional().catch(undefined),
  details: z.record(z.string(), z.unknown()).optional().catch(undefined),
});

/** Remembers the CSRF token of the latest session answer; every change sends it. */
export function rememberCsrf(session: PortalSession): void {
  csrfToken = session.csrfToken;
}

/** Sends a request; the parsed JSON answer (`unknown`: read it through `request` and a schema), or an ApiError. */
export async function api(method: string, path: string, body?: unknown): Promise<unknown> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const response = await fetch(`/portal/api${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  const parsed: unknown = text ? JSON.parse(text) : undefined;
  if (!response.ok) {
    const refusal = refusalSchema.safeParse(parsed);
    const read = refusal.success ? refusal.data : {};
    throw new ApiError(
      read.error ?? `Request failed (${response.status})`,
      response.status,
      read.code ?? 'ERROR',
      read.details,
    );
  }
  return parsed;
}

/**
 * Sends a request and parses its answer with the shared zod schema of the route (the one core-api registers
 * for OpenAPI): the page reads checked data, and an answer of another shape is an `UnexpectedAnswer`.
 */
export async function request<S extends z.ZodType>(
  schema: S,
  method: string,
  path: string,
  body?: unknown,
): Promise<z.output<S>> {
  const answer = await api(method, path, body);
  const result = schema.safeParse(answer);
  if (result.success) return result.data;
  throw new UnexpectedAnswer(
    `${method} ${path}`,
    result.error.issues.slice(0, 3).map((issue) => `${issue.path.join('.') || 'answer'}: ${issue.message}`),
  );
}

export async function loadSession(): Promise<PortalSession> {
  const session = await request(portalSessionSchema, 'GET', '/session');
  rememberCsrf(session);
  return session;
}

/** The token of an invite or reset link: it rides in the URL's fragment, never sent to a server. */
export function linkToken(): string {
  return new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '';
}
