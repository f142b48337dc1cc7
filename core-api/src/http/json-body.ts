import { AppError } from '@pts/shared';
import express, { type Request, type RequestHandler } from 'express';

/** Keeps the exact body bytes for signature checks while parsing JSON. */
export function jsonBody(limitBytes: number): RequestHandler {
  return express.json({
    limit: limitBytes,
    verify: (req, _res, buf) => {
      (req as Request).rawBody = buf;
    },
  });
}

/** Refuses a body that is not declared as JSON, with what to send instead. */
export const requireJson: RequestHandler = (req, _res, next) => {
  if (!req.is('application/json')) {
    return next(
      new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as JSON with the header Content-Type: application/json'),
    );
  }
  next();
};
