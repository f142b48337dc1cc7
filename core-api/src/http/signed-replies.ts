import { AppError, SIGNATURE_HEADER } from '@pts/shared';
import type { Request, RequestHandler, Response } from 'express';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import { isSafeMethod } from './brand-signature.ts';

/** Marks an answer replayed from an earlier request with the same signature. */
export const REPLAYED_HEADER = 'X-PTS-Replayed';

export interface SignedRepliesDeps {
  db: Database;
  logger: Logger;
  /** How long a retry waits for the first request's answer (it may be waiting for its mint). */
  waitMs: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Idempotent retries of brand-signed requests (docs/api/events.md, "Retries"). Two identical signed
 * requests carry the same signature; for unsafe methods the second must not have a second effect, and a
 * client that timed out must still learn what the first did. So the request that recorded the signature as
 * used keeps its answer (status, content type, body) in `used_signatures`, and a repeat gets that answer back
 * with `X-PTS-Replayed: true` — waiting while the first is still running. A 429 (refused before any effect)
 * releases the signature; a 5xx keeps it without an answer, and repeats get 409 until it expires: the
 * outcome is unknown, so only a freshly signed request may try again.
 */
export function createSignedReplies(deps: SignedRepliesDeps) {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  // Answers are written in groups: one UPDATE per flush instead of one round trip per signed request (the
  // event path's throughput depends on it). A repeat waits for the first answer anyway.
  let queued: { signature: string; status: number; type: string | null; body: string }[] = [];
  let flushing: Promise<void> | undefined;
  const flush = async () => {
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      await sql`
        UPDATE used_signatures AS u
        SET response_status = v.status, response_type = v.type, response_body = v.body
        FROM unnest(${batch.map((e) => e.signature)}::text[], ${batch.map((e) => e.status)}::int[],
          ${batch.map((e) => e.type)}::text[], ${batch.map((e) => e.body)}::text[]) AS v(signature, status, type, body)
        WHERE u.signature = v.signature AND u.response_status IS NULL`.execute(deps.db);
    }
  };
  const store = async (signature: string, status: number, type: string | undefined, body: string) => {
    if (status === 429) {
      await deps.db
        .deleteFrom('used_signatures')
        .where('signature', '=', signature)
        .where('response_status', 'is', null)
        .execute();
      return;
    }
    if (status >= 500) return;
    queued.push({ signature, status, type: type ?? null, body });
    // Requests answered while a flush runs join the next one.
    flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(flush).finally(() => {
      flushing = undefined;
    });
    await flushing;
  };

  /** Keeps the answer of every request that recorded a signature; mount before the routes. */
  const capture: RequestHandler = (req, res, next) => {
    if (isSafeMethod(req.method) || req.headers[SIGNATURE_HEADER] === undefined) return next();
    let body = '';
    const send = res.send.bind(res);
    res.send = ((chunk?: unknown) => {
      if (typeof chunk === 'string') body = chunk;
      else if (Buffer.isBuffer(chunk)) body = chunk.toString('utf8');
      return send(chunk as never);
    }) as Response['send'];
    res.on('finish', () => {
      const signature = req.signatureOwned;
      if (!signature) return;
      const type = res.getHeader('content-type');
      store(signature, res.statusCode, typeof type === 'string' ? type : undefined, body).catch((error) =>
        deps.logger.warn({ err: error, path: req.path }, 'could not keep the answer of a signed request'),
      );
    });
    next();
  };

  /** Answers a repeated signature with the first request's answer, or 409 when there is none to give. */
  const replay = async (req: Request, res: Response): Promise<void> => {
    const signature = String(req.headers[SIGNATURE_HEADER] ?? '').toLowerCase();
    // A wait for a concurrent request in this process: a monotonic timer, not the (injected) wall clock.
    const deadline = performance.now() + deps.waitMs;
    let delay = 20;
    for (;;) {
      const row = await deps.db
        .selectFrom('used_signatures')
        .select(['response_status', 'response_type', 'response_body'])
        .where('signature', '=', signature)
        .executeTakeFirst();
      if (row && row.response_status !== null) {
        res.status(row.response_status).setHeader(REPLAYED_HEADER, 'true');
        if (row.response_type) res.setHeader('content-type', row.response_type);
        res.send(row.response_body ?? '');
        return;
      }
      if (!row || performance.now() >= deadline) break;
      await sleep(delay);
      delay = Math.min(delay * 2, 250);
    }
    throw new AppError(
      'CONFLICT',
      'A request with this signature is still running or ended without an answer to repeat; sign the request afresh (a new X-PTS-Timestamp) to try again',
      { reason: 'signature_in_use' },
      { retryAfter: 1 },
    );
  };

  return { capture, replay };
}

export type SignedReplies = ReturnType<typeof createSignedReplies>;
