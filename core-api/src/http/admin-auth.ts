import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '@pts/shared';
import type { RequestHandler } from 'express';

const WHERE_TO_FIND =
  'send `Authorization: Bearer <token>` with the admin token from `<PTS_DATA_DIR>/admin-token` ' +
  '(default .pts-data/admin-token, written by `npm start`) or the PTS_ADMIN_TOKEN setting';

/** Lets a request through only with `Authorization: Bearer <token>`; otherwise 401 UNAUTHORIZED. */
export function requireAdminToken(token: string): RequestHandler {
  if (!token) throw new Error('requireAdminToken needs a non-empty admin token');
  // Comparing fixed-length digests keeps timingSafeEqual usable and hides the token's length.
  const expected = digest(token);
  return (req, _res, next) => {
    const header = req.get('authorization');
    const match = header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
    if (!match?.[1]) {
      next(new AppError('UNAUTHORIZED', `Missing admin token: ${WHERE_TO_FIND}`));
      return;
    }
    if (!timingSafeEqual(digest(match[1]), expected)) {
      next(new AppError('UNAUTHORIZED', `Admin token does not match: ${WHERE_TO_FIND}`));
      return;
    }
    next();
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
