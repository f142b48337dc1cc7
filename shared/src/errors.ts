/** Every machine-readable error code the platform answers with, and its HTTP status. */
export const errorStatus = {
  VALIDATION_ERROR: 400,
  MISSING_FIELDS: 400,
  INVALID_FORMAT: 400,
  INVALID_EMAIL: 400,
  INVALID_JSON: 400,
  UNKNOWN_EVENT_TYPE: 400,
  /** A streak milestone that is not reached, not a milestone, or already claimed (spec 3 `claim_failed`). */
  CLAIM_FAILED: 400,
  /** The user has no wallet yet (never earned tokens), so there is nothing to spend. */
  NO_WALLET: 400,
  /** An account link code that is unknown, expired or already used (details.reason says which). */
  INVALID_LINK_CODE: 400,
  UNAUTHORIZED: 401,
  INVALID_SIGNATURE: 401,
  FORBIDDEN: 403,
  DOMAIN_NOT_AUTHORIZED: 403,
  AUTOMATION_DISABLED: 403,
  CHANNEL_NOT_ALLOWED: 403,
  /** The member is blocked by the brand (the portal's member page): their events are refused until unblocked. */
  MEMBER_BLOCKED: 403,
  /** The event type's rule was archived by the brand: it earns nothing until restored. */
  RULE_ARCHIVED: 403,
  VALIDATION_FAILED: 403,
  /** A rate rule's event worth less than the rule's minValue: it earns nothing (recorded, no claim used). */
  VALUE_BELOW_MINIMUM: 403,
  CONTRACT_NOT_WHITELISTED: 403,
  /** A perk constraint the user does not meet (details list the failing constraints). */
  NOT_ELIGIBLE: 403,
  NOT_FOUND: 404,
  BRAND_NOT_FOUND: 404,
  RULE_NOT_FOUND: 404,
  PERK_NOT_FOUND: 404,
  CONFLICT: 409,
  DUPLICATE_EVENT: 409,
  CLAIM_LIMIT_REACHED: 409,
  /** A perk redemption asking for more charges than the holder has left. */
  INSUFFICIENT_CHARGES: 409,
  /** Balance below a perk's cost (details: balance, cost, missing). */
  INSUFFICIENT_BALANCE: 409,
  /** A perk whose supply is exhausted. */
  SOLD_OUT: 409,
  /** A perk that is inactive or not on chain yet. */
  PERK_UNAVAILABLE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  COOLDOWN_ACTIVE: 429,
  MAX_CLAIMS_REACHED: 429,
  MAX_TOTAL_CLAIMS_REACHED: 429,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  TRANSACTION_FAILED: 500,
  /** A feature this deployment cannot provide (e.g. custodial signing with Privy wallets). */
  NOT_IMPLEMENTED: 501,
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
