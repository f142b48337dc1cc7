import { AppError } from '@pts/shared';
import type { z } from 'zod';

/** `field: message` lines for each issue, the way `details.errors` lists them. */
export function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.join('.');
    return path ? `${path}: ${issue.message}` : issue.message;
  });
}

/** Parses input with a shared schema at the edge; a failure becomes a 400 naming every problem. */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown, what = 'request body'): z.output<T> {
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
