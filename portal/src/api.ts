import type { PortalSession } from '@pts/shared/schemas/portal';

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

/** Remembers the CSRF token of the latest session answer; every change sends it. */
export function rememberCsrf(session: PortalSession): void {
  csrfToken = session.csrfToken;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
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
  const parsed = text ? JSON.parse(text) : undefined;
  if (!response.ok) {
    throw new ApiError(
      parsed?.error ?? `Request failed (${response.status})`,
      response.status,
      parsed?.code ?? 'ERROR',
      parsed?.details,
    );
  }
  return parsed as T;
}

export async function loadSession(): Promise<PortalSession> {
  const session = await api<PortalSession>('GET', '/session');
  rememberCsrf(session);
  return session;
}

/** The token of an invite or reset link: it rides in the URL's fragment, never sent to a server. */
export function linkToken(): string {
  return new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '';
}

/** Field errors of a validation answer (`details.errors` entries look like `field: message`). */
export function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const result: Record<string, string> = {};
  const field = error.details?.field;
  if (typeof field === 'string') result[field] = error.message;
  const errors = error.details?.errors;
  if (Array.isArray(errors)) {
    for (const entry of errors) {
      const match = /^([A-Za-z0-9_.]+): (.*)$/.exec(String(entry));
      if (match?.[1] && match[2]) result[match[1].split('.')[0]!] = match[2];
    }
  }
  return result;
}
