import { AppError } from '@pts/shared';
import express, { type Request, type RequestHandler } from 'express';

/** Deeper JSON than any request of the API needs; deeper input is refused before it is parsed. */
export const MAX_JSON_DEPTH = 32;

/**
 * Refuses JSON text the database or the parser cannot take, before it is parsed, in one pass over the raw
 * body: nesting deeper than `maxDepth` (thousands of `[` would overflow a recursive walk), the escape
 * `\u0000` (PostgreSQL text cannot hold NUL) and lone UTF-16 surrogates (`\ud800` without its pair, which
 * no UTF-8 column can store). Raw bytes cannot carry either: the UTF-8 decoder turns invalid sequences into
 * U+FFFD and a raw control character is a JSON syntax error.
 */
export function checkJsonText(text: string, maxDepth = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  const refuse = (message: string, reason: string): never => {
    throw new UnsafeJsonError(message, reason);
  };
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x22) inString = false;
      else if (char === 0x5c) {
        if (text.charCodeAt(i + 1) !== 0x75) {
          i++;
          continue;
        }
        const unit = Number.parseInt(text.slice(i + 2, i + 6), 16);
        i += 5;
        if (Number.isNaN(unit)) continue; // a syntax error: the parser says so
        if (unit === 0) refuse(NUL_MESSAGE, 'nul_character');
        if (unit >= 0xd800 && unit <= 0xdbff) {
          const next = text.slice(i + 1, i + 3) === '\\u' ? Number.parseInt(text.slice(i + 3, i + 7), 16) : Number.NaN;
          if (!(next >= 0xdc00 && next <= 0xdfff)) refuse(LONE_SURROGATE_MESSAGE, 'lone_surrogate');
          i += 6;
        } else if (unit >= 0xdc00 && unit <= 0xdfff) {
          refuse(LONE_SURROGATE_MESSAGE, 'lone_surrogate');
        }
      }
      continue;
    }
    if (char === 0x22) inString = true;
    else if (char === 0x5b || char === 0x7b) {
      if (++depth > maxDepth) {
        refuse(`JSON nested deeper than ${maxDepth} levels; send a flatter document`, 'too_deep');
      }
    } else if (char === 0x5d || char === 0x7d) depth--;
  }
}

/**
 * Thrown from the body reader's `verify` hook, which wraps what it throws (so not an AppError, whose status
 * is read-only); the error handler turns it into 400 VALIDATION_ERROR with `details.reason`.
 */
export class UnsafeJsonError extends Error {
  readonly status = 400;
  readonly type = 'json.unsafe';
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

export const NUL_MESSAGE = 'Strings may not contain the NUL character (\\u0000); remove it';
export const LONE_SURROGATE_MESSAGE =
  'Strings may not contain a lone UTF-16 surrogate (such as \\ud800 without its pair); send valid Unicode text';

/**
 * Parses a JSON body (one place for every route): keeps the exact bytes for signature checks and refuses
 * text that must never reach a handler or the database (checkJsonText).
 */
export function jsonBody(limitBytes: number, options: { strict?: boolean } = {}): RequestHandler {
  return express.json({
    limit: limitBytes,
    ...(options.strict === false ? { strict: false } : {}),
    verify: (req, _res, buf) => {
      (req as Request).rawBody = buf;
      checkJsonText(buf.toString('utf8'));
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
