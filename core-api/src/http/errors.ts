import { AppError, type ErrorEnvelope, isAppError } from '@pts/shared';
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { isPoolWaitTimeout } from '../db/database.ts';
import { isReplayedSignature } from './brand-signature.ts';
import { UnsafeJsonError } from './json-body.ts';
import type { SignedReplies } from './signed-replies.ts';

/** Shape A error envelope (spec 2.8): `{success:false, error, code, details, retryAfter?}`. */
export function errorBody(error: AppError): ErrorEnvelope {
  const body: ErrorEnvelope = { success: false, error: error.message, code: error.code };
  if (error.details) body.details = error.details;
  if (error.retryAfter !== undefined) body.retryAfter = error.retryAfter;
  return body;
}

export function sendError(res: Response, error: AppError): void {
  if (error.retryAfter !== undefined) res.setHeader('Retry-After', String(error.retryAfter));
  res.status(error.status).json(errorBody(error));
}

/** Unknown endpoint: 404 in the same envelope. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new AppError('NOT_FOUND', `No endpoint ${req.method} ${req.path}`));
};

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  limit?: number;
}

/**
 * What an error means to the client: AppErrors as they are; body-reader failures (too large, not JSON,
 * unsafe JSON text, unsupported charset or encoding, a body that does not inflate, too many form fields) as
 * the 4xx that says what to fix; undefined for anything else (a 500, logged by the caller).
 */
export function toClientError(err: unknown): AppError | undefined {
  if (isAppError(err)) return err;
  if (err instanceof UnsafeJsonError) return new AppError('VALIDATION_ERROR', err.message, { reason: err.reason });
  // Every PostgreSQL connection stayed busy for PTS_DB_CONNECT_TIMEOUT_MS: the service is saturated, not broken.
  if (isPoolWaitTimeout(err)) {
    return new AppError(
      'SERVICE_UNAVAILABLE',
      'The database has no free connection right now; retry shortly',
      { reason: 'database_busy' },
      { retryAfter: 2 },
    );
  }
  // Express's router could not percent-decode a path parameter (`/brands/%ED%A0%80`): the path, not the body.
  if (err instanceof URIError) {
    return new AppError(
      'VALIDATION_ERROR',
      'A path segment is not valid percent-encoded UTF-8; encode each path parameter with encodeURIComponent',
      { reason: 'malformed_path' },
    );
  }
  const parserError = err as BodyParserError | undefined;
  if (parserError?.type === 'entity.too.large') {
    return new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds the ${parserError.limit ?? 10240} byte limit`, {
      limit: parserError.limit,
    });
  }
  if (parserError?.type === 'entity.parse.failed') {
    return new AppError('INVALID_JSON', 'Request body is not valid JSON', { errors: [parserError.message] });
  }
  if (parserError?.type === 'encoding.unsupported' || parserError?.type === 'charset.unsupported') {
    return new AppError('UNSUPPORTED_MEDIA_TYPE', parserError.message);
  }
  // Everything else the body readers refuse (a body that does not inflate as its Content-Encoding says,
  // too many form fields, an aborted upload) is the client's to fix: 4xx with the reader's reason.
  const status = parserError?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) return bodyReadError(status, parserError!);
  return undefined;
}

/** The one JSON error handler, mounted last. Maps body-parser failures, AppErrors and everything else. */
export function createErrorHandler(
  logger: Logger,
  options: { replies?: Pick<SignedReplies, 'replay'> } = {},
): ErrorRequestHandler {
  const handle: ErrorRequestHandler = (err, req, res, _next) => {
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    const error = toClientError(err);
    if (error) {
      if (error.status >= 500) logger.error({ err, path: req.path }, error.message);
      return sendError(res, error);
    }
    logger.error({ err, method: req.method, path: req.path }, 'unhandled error');
    sendError(res, new AppError('INTERNAL_ERROR', 'Internal error; it has been logged'));
  };
  const { replies } = options;
  if (!replies) return handle;
  // A repeated signature of an unsafe request gets the first request's answer (http/signed-replies.ts).
  return (err, req, res, next) => {
    if (!isReplayedSignature(err) || res.headersSent) return handle(err, req, res, next);
    replies.replay(req, res).catch((error: unknown) => handle(error, req, res, next));
  };
}

function bodyReadError(status: number, error: BodyParserError): AppError {
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', `Request body refused: ${error.message}`);
  if (status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', error.message);
  const reason = error.type ?? 'unreadable_body';
  return new AppError(
    'VALIDATION_ERROR',
    `The request body could not be read (${error.message}); send it as declared by Content-Type and Content-Encoding`,
    { reason },
  );
}
