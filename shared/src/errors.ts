/** Every machine-readable error code the platform answers with, and its HTTP status. */
export const errorStatus = {
  VALIDATION_ERROR: 400,
  INVALID_EMAIL: 400,
  INVALID_JSON: 400,
  UNKNOWN_EVENT_TYPE: 400,
  UNAUTHORIZED: 401,
  INVALID_SIGNATURE: 401,
  FORBIDDEN: 403,
  DOMAIN_NOT_AUTHORIZED: 403,
  AUTOMATION_DISABLED: 403,
  CHANNEL_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
  BRAND_NOT_FOUND: 404,
  RULE_NOT_FOUND: 404,
  CONFLICT: 409,
  DUPLICATE_EVENT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  COOLDOWN_ACTIVE: 429,
  MAX_CLAIMS_REACHED: 429,
  MAX_TOTAL_CLAIMS_REACHED: 429,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export type ErrorDetails = Record<string, unknown> & { errors?: string[]; field?: string; value?: string };

/** A failure the caller can act on: short message, machine code, and details saying what to fix. */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;
  /** Seconds after which a retry may succeed (rate limits, cooldowns). */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails, options?: { retryAfter?: number }) {
    super(message);
    this.code = code;
    this.details = details;
    this.retryAfter = options?.retryAfter;
  }

  get status(): number {
    return errorStatus[this.code];
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
