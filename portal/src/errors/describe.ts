import { ApiError } from '../api.ts';

/** Input the shared schema refused before anything was sent: `field.path: message` lines, as the server's. */
export class InvalidInput extends Error {
  constructor(readonly errors: string[]) {
    super(`Please fix: ${errors.join('; ')}`);
  }
}

/** A server answer that does not match the shared schema of its route (the portal and core-api disagree). */
export class UnexpectedAnswer extends Error {
  constructor(
    readonly path: string,
    readonly problems: string[],
  ) {
    super(
      `The server's answer to ${path} was not understood (${problems.join('; ')}). Reload the page; if it stays, tell your operator.`,
    );
  }
}

/** What a person reads about a failure: one sentence, and the message of each field it names. */
export interface DescribedError {
  /** The sentence to show (a refusal's own message, or what to do when the server or the network failed). */
  message: string;
  /** By top-level form field (`maxSupply`, `email`): the message to show under that field. */
  fields: Record<string, string>;
  /** By full path (`milestones.1.days`); lines that name no path are under `''`. */
  paths: Record<string, string>;
}

const FIELD_LINE = /^([A-Za-z0-9_.]+): ([\s\S]*)$/;

function lines(error: unknown): string[] {
  if (error instanceof InvalidInput) return error.errors;
  if (error instanceof ApiError && Array.isArray(error.details?.errors)) return error.details.errors.map(String);
  return [];
}

function sentence(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status >= 500) {
      return `The server could not answer (${error.status}${error.code !== 'ERROR' ? `, ${error.code}` : ''}): ${error.message}. Try again in a moment.`;
    }
    return error.message;
  }
  // fetch rejects with a TypeError when the network or the server is unreachable.
  if (error instanceof TypeError) return 'The portal could not reach the server. Check your connection and try again.';
  if (error instanceof Error) return error.message;
  return 'Something went wrong. Reload the page and try again.';
}

/**
 * The portal's one error mapper: every refused request, failed fetch, refused input and mis-shaped answer
 * becomes what a person reads (`message`) and, for a validation refusal, the message of each field
 * (`fields` for the form's fields, `paths` for nested ones). Server answers name fields in two ways:
 * `details.field` (one field, the message is the refusal's) and `details.errors` (`field.path: message`).
 */
export function describeError(error: unknown): DescribedError {
  const paths: Record<string, string> = {};
  const fields: Record<string, string> = {};
  for (const line of lines(error)) {
    const match = FIELD_LINE.exec(line);
    const path = match?.[1] ?? '';
    const text = match?.[2] ?? line;
    paths[path] ??= text;
    if (path !== '') fields[path.split('.')[0] ?? path] ??= text;
  }
  const field = error instanceof ApiError ? error.details?.field : undefined;
  if (typeof field === 'string' && error instanceof Error) {
    fields[field] ??= error.message;
    paths[field] ??= error.message;
  }
  const message = sentence(error);
  if (error !== null && error !== undefined && lines(error).length === 0) paths[''] = message;
  return { message, fields, paths };
}

/** The message of each form field a refusal names (empty for no error or a refusal that names none). */
export const fieldErrors = (error: unknown): Record<string, string> => describeError(error).fields;

/** The messages of a refusal by full field path; lines without a path (or the whole message) under `''`. */
export const messagesByPath = (error: unknown): Record<string, string> =>
  error instanceof Error ? describeError(error).paths : {};
