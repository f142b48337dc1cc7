import {
  AGENT_KEY_HEADER,
  AppError,
  type Clock,
  computeSignature,
  NONCE_HEADER,
  NONCE_PATTERN,
  SIGNATURE_HEADER,
  signatureMatches,
  TIMESTAMP_HEADER,
} from '@pts/shared';
import type { Request } from 'express';
import type { KeyedCache } from '../caching/keyed-cache.ts';
import type { Database } from '../db/database.ts';
import { isSafeMethod, recordSignatureUse, type SignatureClaim } from '../http/brand-signature.ts';
import type { SecretBox } from '../security/secret-box.ts';
import type { AgentAccess, AgentPrincipal } from './agent-tool.ts';
import { type ActiveAgentKey, findActiveKey } from './keys/agent-keys.service.ts';

export interface AgentAuthDeps {
  db: Database;
  clock: Clock;
  secrets: SecretBox;
  /** ±seconds a signature's timestamp may differ from server time (PTS_SIGNATURE_TOLERANCE_SECONDS, 300). */
  toleranceSeconds: number;
  /**
   * Live keys already read (app.ts: kept PTS_RULE_CACHE_SECONDS, forgotten at once on a revocation through
   * this process or any brand change); without it every signed request reads its key row.
   */
  keys?: KeyedCache<ActiveAgentKey>;
}

/** A verified agent signature: who signed, and the signature to record as used (unsafe methods). */
export interface AgentAuthentication {
  principal: AgentPrincipal;
  claim: SignatureClaim;
}

/** Whether the request carries any agent-signature header (then it must be a valid one). */
export function hasAgentSignature(req: Request): boolean {
  return (
    req.headers[AGENT_KEY_HEADER] !== undefined ||
    req.headers[SIGNATURE_HEADER] !== undefined ||
    req.headers[TIMESTAMP_HEADER] !== undefined
  );
}

function unauthorized(message: string, reason: string): AppError {
  return new AppError('UNAUTHORIZED', message, { reason });
}

/**
 * Verifies `X-PTS-Agent-Key`, `X-PTS-Timestamp` (Unix seconds, within ±tolerance) and `X-PTS-Signature` =
 * hex HMAC-SHA256(secret, `timestamp.METHOD.path-with-query.raw-body`) — the brand signature's payload
 * under the agent key's secret (docs/agent-api.md, "Signing"). With the optional `X-PTS-Nonce` the nonce is
 * signed after the timestamp (`timestamp.nonce.METHOD.…`): clients sharing a key then never produce the same
 * signature for identical requests in one second, while each signature is still accepted once. Returns undefined for an unsigned request;
 * throws 401 for a malformed, stale, mismatched, unknown or revoked one. Does NOT record the signature:
 * the router does it after the rate limit (recordAgentSignature), so a refused request leaves it usable.
 */
export function createAgentAuthenticator(deps: AgentAuthDeps) {
  return async function authenticateAgent(req: Request): Promise<AgentAuthentication | undefined> {
    if (!hasAgentSignature(req)) return undefined;
    const keyId = String(req.headers[AGENT_KEY_HEADER] ?? '');
    const signature = String(req.headers[SIGNATURE_HEADER] ?? '').toLowerCase();
    const timestampText = String(req.headers[TIMESTAMP_HEADER] ?? '');
    if (!keyId || !/^[0-9a-f]{64}$/.test(signature) || !/^\d{1,12}$/.test(timestampText)) {
      throw unauthorized(
        'Signed agent requests need X-PTS-Agent-Key (key id), X-PTS-Timestamp (Unix seconds) and X-PTS-Signature (64 hex characters of HMAC-SHA256)',
        'malformed_headers',
      );
    }
    const nonceHeader = req.headers[NONCE_HEADER];
    const nonce = nonceHeader === undefined ? undefined : String(nonceHeader);
    if (nonce !== undefined && !NONCE_PATTERN.test(nonce)) {
      throw unauthorized(
        'X-PTS-Nonce must be 8 to 64 letters, digits, - or _ (a fresh random value per request), or left out',
        'malformed_headers',
      );
    }
    const timestamp = Number(timestampText);
    const skew = Math.abs(deps.clock.now().getTime() / 1000 - timestamp);
    if (skew > deps.toleranceSeconds) {
      throw unauthorized(
        `Signature timestamp is ${Math.round(skew)} s away from server time; it must be within ${deps.toleranceSeconds} s`,
        'timestamp_out_of_window',
      );
    }
    const key = deps.keys
      ? await deps.keys.get(keyId, () => findActiveKey(deps, keyId))
      : await findActiveKey(deps, keyId);
    if (!key) throw unauthorized('Unknown or revoked agent key', 'unknown_key');
    const expected = computeSignature({
      securityKey: key.secret,
      timestamp,
      nonce,
      method: req.method,
      pathWithQuery: req.originalUrl,
      body: req.rawBody ?? Buffer.alloc(0),
    });
    if (!signatureMatches(expected, signature)) {
      throw unauthorized(
        nonce === undefined
          ? 'Signature does not match: sign `timestamp.METHOD.path-with-query.raw-body` with the agent secret'
          : 'Signature does not match: with X-PTS-Nonce sign `timestamp.nonce.METHOD.path-with-query.raw-body` with the agent secret',
        'mismatch',
      );
    }
    return {
      principal: key.principal,
      claim: { signature, expiresAt: new Date((timestamp + deps.toleranceSeconds) * 1000 + 1000) },
    };
  };
}

export type AgentAuthenticator = ReturnType<typeof createAgentAuthenticator>;

/**
 * Records the signature of a change as used, with the brand signatures' semantics: a repeated identical
 * GET is simply answered again; a repeated change throws the "replayed" error, which the router answers
 * with the first request's stored answer (`X-PTS-Replayed: true`) — it never acts twice.
 */
export async function recordAgentSignature(db: Database, req: Request, claim: SignatureClaim): Promise<void> {
  if (isSafeMethod(req.method)) return;
  await recordSignatureUse(db, req, claim);
}

/** What the principal lacks for `access`, or undefined when it may call (docs/agent-api.md, "Access"). */
export function checkAgentAccess(
  access: AgentAccess,
  principal: AgentPrincipal | undefined,
  params: Record<string, unknown>,
): AppError | undefined {
  if (access === 'public' || access === 'optional') return undefined;
  if (!principal) {
    return new AppError(
      'UNAUTHORIZED',
      'This tool needs a signed request: X-PTS-Agent-Key, X-PTS-Timestamp and X-PTS-Signature (docs/agent-api.md)',
      { reason: 'auth_required' },
    );
  }
  if (access === 'manage') {
    const brandId = typeof params.brandId === 'string' ? params.brandId.toLowerCase() : undefined;
    if (!principal.canManageProgram) return forbidden('This key may not manage programs (canManageProgram)');
    if (!brandId || !principal.brandIds.includes(brandId)) {
      return forbidden(`This key does not act for brand ${String(params.brandId)}`);
    }
  }
  if (access === 'onboard' && !principal.canOnboard) return forbidden('This key may not onboard brands (canOnboard)');
  if (access === 'converse' && principal.tier === 'free') {
    return forbidden('converse needs a pro or enterprise key; this key is on the free tier');
  }
  return undefined;
}

function forbidden(message: string): AppError {
  return new AppError('FORBIDDEN', message);
}
