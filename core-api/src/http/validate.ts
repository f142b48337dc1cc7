import { AppError } from '@pts/shared';
import type { z } from 'zod';
import { LONE_SURROGATE_MESSAGE, NUL_MESSAGE } from './json-body.ts';

/** `field: message` lines for each issue, the way `details.errors` lists them. */
export function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.join('.');
    return path ? `${path}: ${issue.message}` : issue.message;
  });
}

/**
 * Parses input with a shared schema at the edge; a failure becomes a 400 naming every problem. Text no
 * database column can hold (a NUL, a lone UTF-16 surrogate) is refused first, wherever it came from: path
 * parameters and query strings are percent-decoded (`%00`), form bodies too, and none of them passes
 * through the JSON body reader's check (json-body.ts).
 */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown, what = 'request body'): z.output<T> {
  refuseUnstorableText(input, what);
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const errors = describeIssues(result.error);
  const first = result.error.issues[0];
  const field = first?.path.join('.') || undefined;
  const code = field === 'userEmail' && result.error.issues.length === 1 ? 'INVALID_EMAIL' : 'VALIDATION_ERROR';
  const details: Record<string, unknown> = { errors };
  if (field) {
    details.field = field;
    const value = first && pick(input, first.path);
    if (typeof value === 'string') details.value = value.slice(0, 200);
  }
  throw new AppError(code, `Invalid ${what}: ${errors.join('; ')}`, details);
}

function pick(input: unknown, path: PropertyKey[]): unknown {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Throws 400 VALIDATION_ERROR (`details.reason`, `details.field`) at the first string or key holding a NUL or a lone surrogate. */
function refuseUnstorableText(input: unknown, what: string, path: string[] = []): void {
  if (typeof input === 'string') {
    const reason = input.includes('\u0000')
      ? 'nul_character'
      : LONE_SURROGATE.test(input)
        ? 'lone_surrogate'
        : undefined;
    if (!reason) return;
    const field = path.join('.');
    const message = reason === 'nul_character' ? NUL_MESSAGE : LONE_SURROGATE_MESSAGE;
    throw new AppError('VALIDATION_ERROR', `Invalid ${what}${field ? ` (${field})` : ''}: ${message}`, {
      reason,
      ...(field ? { field } : {}),
    });
  }
  // Deeper than any input of the API: the JSON reader refused deeper bodies already, and a schema refuses these.
  if (input === null || typeof input !== 'object' || path.length > 64) return;
  for (const [key, value] of Object.entries(input)) {
    refuseUnstorableText(key, what, path);
    refuseUnstorableText(value, what, [...path, key]);
  }
}
