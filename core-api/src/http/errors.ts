import { AppError, type ErrorEnvelope, isAppError } from '@pts/shared';
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';

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

/** The one JSON error handler, mounted last. Maps body-parser failures, AppErrors and everything else. */
export function createErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    const parserError = err as BodyParserError;
    if (parserError?.type === 'entity.too.large') {
      return sendError(
        res,
        new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds the ${parserError.limit ?? 10240} byte limit`, {
          limit: parserError.limit,
        }),
      );
    }
    if (parserError?.type === 'entity.parse.failed') {
      return sendError(
        res,
        new AppError('INVALID_JSON', 'Request body is not valid JSON', { errors: [parserError.message] }),
      );
    }
    if (parserError?.type === 'encoding.unsupported' || parserError?.type === 'charset.unsupported') {
      return sendError(res, new AppError('UNSUPPORTED_MEDIA_TYPE', parserError.message));
    }
    if (isAppError(err)) {
      if (err.status >= 500) logger.error({ err, path: req.path }, err.message);
      return sendError(res, err);
    }
    logger.error({ err, method: req.method, path: req.path }, 'unhandled error');
    sendError(res, new AppError('INTERNAL_ERROR', 'Internal error; it has been logged'));
  };
}
