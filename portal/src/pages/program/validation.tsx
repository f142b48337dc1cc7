import type { z } from 'zod';
import { InvalidInput } from '../../errors/describe.ts';

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
