import {
  AppError,
  type Clock,
  computeSignature,
  SIGNATURE_HEADER,
  signatureMatches,
  TIMESTAMP_HEADER,
} from '@pts/shared';
import type { Request } from 'express';
import type { Database } from '../db/database.ts';

declare module 'express-serve-static-core' {
  interface Request {
    /** The exact bytes of the body, kept for signature verification. */
    rawBody?: Buffer;
    /** The signature this request recorded as used: its answer is kept for identical retries. */
    signatureOwned?: string;
  }
}

export interface BrandSignatureDeps {
  db: Database;
  clock: Clock;
  toleranceSeconds: number;
  /**
   * The brand's security keys that verify now, in clear (decrypted from storage): the current one, and during
   * a rotation's grace period the replaced one too; undefined for an unknown brand.
   */
  securityKeysFor(brandId: string): Promise<string[] | undefined>;
}

/** GET and HEAD: reads, which may repeat a signature inside the window. */
export function isSafeMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/**
 * Marks the request as the one that recorded `claim` as used, so its answer is stored and replayed to
 * identical retries (http/signed-replies.ts). Paths that record the claim in their own transaction call it
 * once that transaction committed.
 */
export function markSignatureOwner(req: Request, claim: SignatureClaim): void {
  req.signatureOwned = claim.signature;
}

/** Whether the request carries brand-signature headers at all. */
export function hasBrandSignature(req: Request): boolean {
  return req.headers[SIGNATURE_HEADER] !== undefined || req.headers[TIMESTAMP_HEADER] !== undefined;
}

/**
 * Verifies `X-PTS-Signature` = HMAC-SHA256(securityKey, `timestamp.METHOD.path-with-query.raw-body`) within
 * ±tolerance, and never twice (the signature is recorded until it could no longer be fresh).
 * Returns false when the request is unsigned; throws 401 INVALID_SIGNATURE when signed badly.
 */
export function createBrandSignatureVerifier(deps: BrandSignatureDeps) {
  let lastCleanup = 0;

  const cleanup = (now: Date) => {
    if (now.getTime() - lastCleanup < 60_000) return;
    lastCleanup = now.getTime();
    deps.db
      .deleteFrom('used_signatures')
      .where('expires_at', '<', now)
      .execute()
      .catch(() => {
        lastCleanup = 0;
      });
  };

  /**
   * With `record: false` the caller records the returned claim itself (the event path does it inside the
   * transaction that uses it, so a rolled-back request leaves its signature usable).
   */
  return async function verifyBrandSignature(
    req: Request,
    brandId: string,
    options: { record?: boolean } = {},
  ): Promise<SignatureClaim | undefined> {
    if (!hasBrandSignature(req)) return undefined;
    const signature = String(req.headers[SIGNATURE_HEADER] ?? '').toLowerCase();
    const timestampText = String(req.headers[TIMESTAMP_HEADER] ?? '');
    const fail = (message: string, reason: string): never => {
      throw new AppError('INVALID_SIGNATURE', message, { reason });
    };
    if (!signature || !/^\d{1,12}$/.test(timestampText)) {
      fail(
        `Signed requests need both ${TIMESTAMP_HEADER} (Unix seconds) and ${SIGNATURE_HEADER} (hex HMAC-SHA256)`,
        'malformed_headers',
      );
    }
    const timestamp = Number(timestampText);
    const now = deps.clock.now();
    const skew = Math.abs(now.getTime() / 1000 - timestamp);
    if (skew > deps.toleranceSeconds) {
      fail(
        `Signature timestamp is ${Math.round(skew)} s away from server time; it must be within ${deps.toleranceSeconds} s`,
        'timestamp_out_of_window',
      );
    }
    const securityKeys = await deps.securityKeysFor(brandId);
    if (!securityKeys?.length) fail(`Brand ${brandId} is not registered`, 'unknown_brand');
    const signedWith = (securityKey: string) =>
      signatureMatches(
        computeSignature({
          securityKey,
          timestamp,
          method: req.method,
          pathWithQuery: req.originalUrl,
          body: req.rawBody ?? Buffer.alloc(0),
        }),
        signature,
      );
    if (!(securityKeys as string[]).some(signedWith)) {
      fail(
        'Signature does not match: sign `timestamp.METHOD.path-with-query.raw-body` with the brand security key',
        'mismatch',
      );
    }
    const expiresAt = new Date((timestamp + deps.toleranceSeconds) * 1000 + 1000);
    const claim = { signature, expiresAt };
    // A read has no effect to repeat: the same signed GET may come again inside the window.
    if (isSafeMethod(req.method)) return claim;
    cleanup(now);
    if (options.record === false) return claim;
    await recordSignatureUse(deps.db, req, claim);
    return claim;
  };
}

/**
 * Records `claim` as used (until it could no longer be fresh) and marks the request as its owner, whose
 * answer identical retries get (http/signed-replies.ts); throws `replayedSignature()` when it was used
 * already. Brand and agent signatures (agent/agent-auth.ts) share this one table and these semantics.
 */
export async function recordSignatureUse(db: Database, req: Request, claim: SignatureClaim): Promise<void> {
  const inserted = await db
    .insertInto('used_signatures')
    .values({ signature: claim.signature, expires_at: claim.expiresAt })
    .onConflict((oc) => oc.column('signature').doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) throw replayedSignature();
  markSignatureOwner(req, claim);
}

export type BrandSignatureVerifier = ReturnType<typeof createBrandSignatureVerifier>;

/** A verified signature, to be recorded as used exactly once. */
export interface SignatureClaim {
  signature: string;
  /** When the signature can no longer be fresh, so its record may go. */
  expiresAt: Date;
}

/**
 * A signature that was already used. The error handler answers it with the first request's stored answer
 * (an idempotent retry); the 401 below is what remains when no answer store is configured.
 */
export function replayedSignature(): AppError {
  return new AppError('INVALID_SIGNATURE', 'This signature was already used; sign each request afresh', {
    reason: 'replayed',
  });
}

/** Whether `error` is the replay of an already used signature. */
export function isReplayedSignature(error: unknown): boolean {
  return (
    error instanceof AppError &&
    error.code === 'INVALID_SIGNATURE' &&
    (error.details as { reason?: unknown } | undefined)?.reason === 'replayed'
  );
}

/** The 401 for an unsigned request to a route that acts for a brand. `what` names the action. */
export function signatureRequired(what: string): AppError {
  return new AppError(
    'INVALID_SIGNATURE',
    `${what} needs a brand signature: send X-PTS-Timestamp and X-PTS-Signature signed with the brand security key ` +
      '(HMAC-SHA256 of `timestamp.METHOD.path-with-query.raw-body`; a GET signs an empty body)',
    { reason: 'signature_required' },
  );
}

/**
 * Verifies the brand's signature and records it as used; an unsigned request is refused (401), never treated
 * as anonymous. For routes that act for a brand's bot, plugin or back-end.
 */
export async function requireBrandSignature(
  verify: BrandSignatureVerifier,
  req: Request,
  brandId: string,
  what: string,
): Promise<SignatureClaim> {
  if (!hasBrandSignature(req)) throw signatureRequired(what);
  const claim = await verify(req, brandId);
  if (!claim) throw signatureRequired(what);
  return claim;
}
