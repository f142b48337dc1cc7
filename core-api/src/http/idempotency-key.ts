import { AppError, idempotencyKeySchema } from '@pts/shared';
import type { Request } from 'express';

/**
 * The idempotency key of a request that makes something once (a redemption, a manual award): the body's
 * `idempotencyKey` (signed with the body, where the body is signed) or the `Idempotency-Key` header; both
 * present and different is a 400.
 */
export function idempotencyKeyOf(req: Request, fromBody: string | undefined): string | undefined {
  const header = req.get('idempotency-key');
  if (header === undefined) return fromBody;
  const parsed = idempotencyKeySchema.safeParse(header);
  if (!parsed.success) {
    throw new AppError(
      'VALIDATION_ERROR',
      `Idempotency-Key header ${parsed.error.issues[0]?.message ?? 'is invalid'}`,
      {
        field: 'Idempotency-Key',
      },
    );
  }
  if (fromBody !== undefined && fromBody !== parsed.data) {
    throw new AppError(
      'VALIDATION_ERROR',
      "The Idempotency-Key header and the body's idempotencyKey differ: send one of them, or the same value in both",
      { field: 'idempotencyKey' },
    );
  }
  return parsed.data;
}
