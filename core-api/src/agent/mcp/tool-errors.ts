import { isAppError } from '@pts/shared';
import { agentErrorCode } from '../agent-router.ts';

/** What a failed tool call reports: `{code, status, message}` in the agent API's vocabulary, plus pts's own code. */
export interface ToolFailure {
  code: string;
  status: number;
  message: string;
  /** The platform's precise code (`INSUFFICIENT_BALANCE`, `VALIDATION_ERROR`…), when there is one. */
  reason?: string;
  details?: unknown;
}

/**
 * Maps whatever a tool threw to a failure an AI client can act on. AppErrors and HTTP answers (the core-api
 * client's `CoreApiError`) keep their message; anything else is an `internal` error whose message is not
 * shown (it may carry internals), the caller logs it.
 */
export function toolFailureOf(error: unknown): ToolFailure {
  const status = statusOf(error);
  if (status !== undefined && status < 500) {
    const e = error as { message: string; code?: unknown; details?: unknown };
    return {
      code: agentErrorCode(status),
      status,
      message: e.message,
      ...(typeof e.code === 'string' ? { reason: e.code } : {}),
      ...(e.details !== undefined ? { details: e.details } : {}),
    };
  }
  // 5xx AppErrors and remote answers name the failure without internals (the remote API already chose the text).
  if (status !== undefined && (isAppError(error) || isCoreApiError(error))) {
    const e = error as { message: string; code: string };
    return { code: 'internal', status, message: e.message, reason: e.code };
  }
  return { code: 'internal', status: status ?? 500, message: 'The tool failed; see the server log' };
}

function isCoreApiError(error: unknown): boolean {
  return error instanceof Error && error.name === 'CoreApiError';
}

function statusOf(error: unknown): number | undefined {
  if (isAppError(error)) return error.status;
  if (isCoreApiError(error)) {
    const status = (error as Error & { status: number }).status;
    // 0: the API did not answer (unreachable, timeout): a 503 for the caller.
    return status === 0 ? 503 : status;
  }
  return undefined;
}
