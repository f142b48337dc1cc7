import type { z } from 'zod';
import { ApiError } from '../../api.ts';

/** Input the shared schema refused before anything was sent: `field.path: message` lines, as the server's. */
export class InvalidInput extends Error {
  constructor(readonly errors: string[]) {
    super(`Please fix: ${errors.join('; ')}`);
  }
}

/** Parses with the shared schema the server uses; on failure throws its messages, in the server's format. */
export function validated<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new InvalidInput(
    result.error.issues.map((issue) =>
      issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message,
    ),
  );
}

/**
 * The messages of a refused change by full field path (`milestones.1.days`, `definitions.3.name`), from the
 * shared schema in the browser or from the server (`details.errors`); lines without a path under `''`.
 */
export function messagesByPath(error: unknown): Record<string, string> {
  const lines =
    error instanceof InvalidInput
      ? error.errors
      : error instanceof ApiError && Array.isArray(error.details?.errors)
        ? (error.details.errors as unknown[]).map(String)
        : [];
  const result: Record<string, string> = {};
  for (const line of lines) {
    const match = /^([A-Za-z0-9_.]+): ([\s\S]*)$/.exec(line);
    const path = match?.[1] ?? '';
    result[path] ??= match?.[2] ?? line;
  }
  if (error instanceof Error && lines.length === 0) result[''] = error.message;
  return result;
}

/** `''` → NaN, so an empty number field is refused by the schema rather than read as 0. */
export const numberOf = (text: string) => (text.trim() === '' ? Number.NaN : Number(text));

/** The error text next to a field (`id` for aria-describedby) and the attributes that point the field at it. */
export function fieldMessage(messages: Record<string, string>, path: string, id: string) {
  const message = messages[path];
  return {
    error: message ? (
      <span className="error" id={id}>
        {message}
      </span>
    ) : null,
    attributes: message ? { 'aria-invalid': true as const, 'aria-describedby': id } : {},
  };
}
