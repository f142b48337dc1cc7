import type { StoredRateTerms } from '@pts/shared';
import type { ColumnType, Generated, JSONColumnType } from 'kysely';

/** Timestamps are written as Date and read back as Date on both drivers. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T extends object | null> = JSONColumnType<T, string, string>;

export interface DetectionConfig {
  urlPatterns?: string[];
  successSelectors?: string[];
  channels?: string[];
}

export interface BrandsTable {
  /** Brand ID: lowercase brand wallet address. */
  address: string;
  name: string;
  website_domain: string;
  /** Domains proven through the `_pts.<domain>` TXT record (spec 4.5). */
  verified_domains: JSONColumnType<string[], string | undefined, string>;
  automation_enabled: ColumnType<boolean, boolean | undefined, boolean>;
  /** Unsigned (domain-authorized) events accepted; off for brands whose integrations all sign. */
  unsigned_events: ColumnType<boolean, boolean | undefined, boolean>;
  /** The brand's X (microblogging) handle without @, read by the X bot; null until set. */
  x_handle: ColumnType<string | null, string | null | undefined, string | null>;
  /** SHA-256 of the security key: compared when a caller presents the key itself (bot `/setup`). */
  security_key_hash: string;
  /** AES-256-GCM encryption of the security key under the master key: needed to verify HMAC signatures. */
  security_key_encrypted: string;
  api_key_hash: string;
  tier: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** retail, gaming, dining, travel (agent onboarding; discovery filters on it); null when never set. */
  category: ColumnType<string | null, string | null | undefined, string | null>;
  /** ISO 4217: its events' values and rate rules are in it ('USD' until set). */
  currency: ColumnType<string, string | undefined, string>;
  /** When the brand's API and security keys were last rotated through the agent API (manage_brand_keys). */
  keys_rotated_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** When they were revoked through the agent API; null while the current keys are valid. */
  keys_revoked_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** SHA-256 of the security key replaced by the last rotation, while its grace period lasts; else null. */
  previous_security_key_hash: ColumnType<string | null, string | null | undefined, string | null>;
  /** AES-256-GCM encryption of that key (signatures made with it verify until it expires). */
  previous_security_key_encrypted: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the previous security key stops verifying; null when there is none. */
  previous_security_key_expires_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Who made the last rotation (`admin`, `agent:<keyId>`, …): an onboarding key's rotation keeps it the key. */
  keys_rotated_by: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A rate rule's terms as stored (amounts as decimal strings of `currency`). */
export type StoredRate = StoredRateTerms;

export interface EventRulesTable {
  /** eventId, unique per brand: `custom_…` for custom events (then equal to event_type), a uuid otherwise. */
  id: string;
  brand_id: string;
  event_type: string;
  reward_amount: ColumnType<bigint, bigint | number, bigint | number>;
  /** -1 or 999999 mean unlimited. */
  max_claims_per_user: number;
  max_total_claims: number | null;
  total_claims: ColumnType<number, number | undefined, number>;
  cooldown_hours: number;
  detection_method: string;
  detection_config: Json<DetectionConfig>;
  is_custom: boolean;
  active: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Archived (undone by the brand): its events are refused with RULE_ARCHIVED until it is restored. */
  archived_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** A rate rule's terms (reward_amount is then 0); null for a fixed reward. */
  rate: ColumnType<StoredRate | null, string | null | undefined, string | null>;
}

export interface UsersTable {
  /** Also the local identity provider's HD derivation index. */
  id: Generated<bigint>;
  email: string;
  wallet_address: string | null;
  idp_user_id: string | null;
  created_at: Timestamp;
}

export type EventStatus = 'accepted' | 'rejected';

export interface EventsTable {
  id: string;
  brand_id: string;
  event_type: string;
  user_email: string;
  status: EventStatus;
  reason: string | null;
  source: string | null;
  domain: string | null;
  channel_id: string | null;
  metadata: Json<Record<string, unknown>>;
  reward_amount: ColumnType<bigint, bigint | number, bigint | number>;
  created_at: Timestamp;
  /** `brand` (brand-signed), `agent:<keyId>` (agent API) or null (unsigned, or a platform award). */
  sent_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** The value the event carried, in integer minor units of value_currency (both null when it had none). */
  value_minor: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  value_currency: ColumnType<string | null, string | null | undefined, string | null>;
}

/** An event's idempotency key: held by the accepted event that used it (spec issue 12 §1). */
export interface EventExternalIdsTable {
  brand_id: string;
  event_type: string;
  external_id: string;
  event_id: string;
  created_at: Timestamp;
}

export interface ClaimCountersTable {
  brand_id: string;
  event_type: string;
  user_email: string;
  claims: number;
  last_claim_at: Timestamp | null;
  last_event_id: string | null;
}

export type MintStatus = 'pending' | 'submitted' | 'confirmed' | 'failed';

export interface RewardMintsTable {
  id: string;
  event_id: string | null;
  brand_id: string;
  wallet_address: string;
  amount: ColumnType<bigint, bigint | number, bigint | number>;
  status: MintStatus;
  chain_tx_id: bigint | null;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  /** Set when the chain reconciler put this confirmed reward back in the outbox (its tx was not on chain). */
  reconciled_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The part of the event's reward that paid the member's debt at the brand instead of being minted. */
  debt_paid: ColumnType<bigint, bigint | number | undefined, bigint | number>;
}

export type ReversalStatus = 'pending' | 'submitted' | 'confirmed';
export type ReversalKind = 'reversal' | 'deduction';

/** A reversal of an event's reward (issue 35 §2; modules/reversals). */
export interface RewardReversalsTable {
  id: string;
  brand_id: string;
  /** The brand's id for it: unique per brand, a repeat answers the first. */
  reversal_id: string;
  /** `reversal`: of an event's reward (a refund); `deduction`: pts taken back by hand, naming no event. */
  kind: ColumnType<ReversalKind, ReversalKind | undefined, ReversalKind>;
  /** The event reversed; null for a deduction. */
  event_id: string | null;
  /** A deduction's reason and the person who made it (`portal:<e-mail>`, `admin`). */
  reason: ColumnType<string | null, string | null | undefined, string | null>;
  actor: ColumnType<string | null, string | null | undefined, string | null>;
  user_email: string;
  /** The wallet the event's reward was minted to (null when it had none: nothing to take on chain). */
  wallet_address: string | null;
  /** What this reversal takes back from the member's earnings. */
  pts: ColumnType<bigint, bigint | number, bigint | number>;
  /** The refunded value of this reversal and the event's refunded total after it (minor units), when by value. */
  refunded_minor: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  refunded_total_minor: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  currency: string | null;
  status: ColumnType<ReversalStatus, ReversalStatus | undefined, ReversalStatus>;
  /** Burned from the wallet, and what became debt (both null until the chain side is confirmed). */
  taken: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  debt: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  chain_tx_id: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  transaction_hash: ColumnType<string | null, string | null | undefined, string | null>;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
  confirmed_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

/** What a member owes a brand after reversals the chain could not take in full. */
/** The dashboard's reversal rollups (migration 2026_12_08_c01_deductions): per brand, UTC day and kind. */
export interface BrandReversalDaysTable {
  id: Generated<bigint>;
  brand_id: string;
  day: ColumnType<string, string, string>;
  kind: string;
  reversals: ColumnType<string, string | number | bigint, string | number | bigint>;
  pts: ColumnType<string, string | number | bigint, string | number | bigint>;
  compacted: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface MemberDebtsTable {
  brand_id: string;
  wallet_address: string;
  debt: ColumnType<bigint, bigint | number, bigint | number>;
  updated_at: Timestamp;
}

export type ChainTxStatus = 'signed' | 'submitted' | 'confirmed' | 'failed';

export interface ChainTxsTable {
  id: Generated<bigint>;
  chain_id: number;
  signer: string;
  nonce: bigint;
  purpose: string;
  status: ChainTxStatus;
  /** Every hash this nonce was signed with (a gas bump re-signs), oldest first. */
  hashes: Json<string[]>;
  current_hash: string;
  raw_tx: string;
  max_fee_per_gas: string;
  max_priority_fee_per_gas: string;
  gas_limit: string;
  block_number: bigint | null;
  gas_used: string | null;
  /** How a `confirmed` row was confirmed: its receipt, or the token supply alone (no receipt exists). */
  confirmed_by: 'receipt' | 'supply' | null;
  last_error: string | null;
  submitted_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ChainDeploymentsTable {
  chain_id: number;
  name: string;
  address: string;
  tx_hash: string | null;
  created_at: Timestamp;
}

export interface UsedSignaturesTable {
  signature: string;
  expires_at: Timestamp;
  /** The first request's answer, replayed to identical retries; null while it runs (or when it failed). */
  response_status: ColumnType<number | null, number | null | undefined, number | null>;
  response_type: ColumnType<string | null, string | null | undefined, string | null>;
  response_body: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A brand portal user (docs/portal.md); `password_hash` is argon2id, null until an invite is accepted. */
export interface PortalUsersTable {
  id: string;
  email: string;
  password_hash: string | null;
  created_at: Timestamp;
  password_changed_at: Timestamp | null;
  /** A platform operator (docs/portal.md, "Operators"): sees every brand, creates brands. */
  operator: Generated<boolean>;
}

export type PortalRole = 'owner' | 'admin' | 'viewer';

export interface PortalMembershipsTable {
  user_id: string;
  brand_id: string;
  role: PortalRole;
  created_at: Timestamp;
}

/** A portal session: the cookie carries the token, the row its SHA-256 (revocable, idle and absolute expiry). */
export interface PortalSessionsTable {
  token_hash: string;
  user_id: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
}

/** Single-use portal links (invites, password resets), stored as the SHA-256 of their token. */
export interface PortalLinksTable {
  token_hash: string;
  kind: 'invite' | 'reset';
  email: string;
  brand_id: string | null;
  role: PortalRole | null;
  created_by: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  /** An operator invite: accepting it makes the user an operator. */
  grants_operator: Generated<boolean>;
}

export interface AuditLogTable {
  id: Generated<bigint>;
  actor: string;
  action: string;
  subject: string | null;
  details: Json<Record<string, unknown>>;
  created_at: Timestamp;
  /** The brand the change belongs to (null for changes of no brand). */
  brand_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface WebhookEndpointsTable {
  /** One endpoint per brand. */
  brand_id: string;
  url: string;
  /** AES-256-GCM encryption of the signing secret under the master key (signing needs the secret itself). */
  secret_encrypted: string;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** `pending` never tried · `sending` leased by a worker · `failed` will be retried · `dead` out of tries. */
export type WebhookDeliveryStatus = 'pending' | 'sending' | 'delivered' | 'failed' | 'dead';

export interface WebhookDeliveriesTable {
  id: string;
  /** The envelope's `id` (`evt_…`): receivers deduplicate by it; the same across retries and replays. */
  event_id: string;
  brand_id: string;
  type: string;
  /** The exact JSON body sent (the envelope), so every attempt sends the same bytes. */
  body: string;
  status: WebhookDeliveryStatus;
  attempts: ColumnType<number, number | undefined, number>;
  /** When the delivery is due (pending, failed) or when a sending worker's lease ends; null once final. */
  next_attempt_at: Timestamp | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** created → fulfilled (reward row committed in the same transaction); created → paid (paid but not mintable, see last_error) → fulfilled; created → canceled (local checkout). */
export type PaymentStatus = 'created' | 'paid' | 'fulfilled' | 'canceled';

/** One token purchase, keyed by the provider's checkout session id (docs/payments.md). */
export interface PaymentsTable {
  session_id: string;
  provider: 'local' | 'stripe';
  brand_id: string;
  /** The brand's own wallet (the brand buys tokens for itself). */
  wallet_address: string;
  user_email: string | null;
  usd_cents: ColumnType<bigint, bigint | number, bigint | number>;
  pts_amount: ColumnType<bigint, bigint | number, bigint | number>;
  currency: string;
  status: PaymentStatus;
  payment_intent_id: string | null;
  /** The outbox row that mints the tokens; set exactly when status is `fulfilled`. */
  reward_mint_id: string | null;
  last_error: string | null;
  paid_at: Timestamp | null;
  fulfilled_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Checkout sessions of the embedded local payment provider (no outside account needed). */
export interface LocalCheckoutSessionsTable {
  id: string;
  brand_id: string;
  brand_name: string;
  amount_total: ColumnType<bigint, bigint | number, bigint | number>;
  currency: string;
  customer_email: string;
  success_url: string;
  cancel_url: string;
  metadata: Json<Record<string, string>>;
  status: 'open' | 'complete' | 'expired';
  payment_status: 'paid' | 'unpaid' | 'no_payment_required';
  payment_intent_id: string | null;
  /** Random per-session token the hosted page's forms must echo (CSRF). */
  form_token: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Inbound payment-provider webhook events already handled (deduplication by event id). */
export interface PaymentWebhookEventsTable {
  event_id: string;
  provider: string;
  type: string;
  session_id: string | null;
  outcome: string;
  received_at: Timestamp;
}

/** A social-login identity with its own wallet (spec 4.8); one row per provider and provider user id. */
export interface OAuthIdentitiesTable {
  /** Also the local identity provider's derivation index on the identity branch (m/44'/60'/1'/0/<id>). */
  id: bigint;
  /** Lowercase provider name (discord, twitter, …). */
  provider: string;
  /** The provider's user id (`oauth_user_id`). */
  subject: string;
  username: string | null;
  wallet_address: string;
  idp_user_id: string;
  created_at: Timestamp;
}

/** A transaction the relayer signs (docs/relayer.md "Transaction lifecycle"); one row per nonce. */
export interface RelayTransactionsTable {
  id: string;
  chain_id: number;
  /** Lowercase relayer address. */
  signer: string;
  /** Null while `queued` (before a nonce is assigned). */
  nonce: bigint | null;
  status: 'queued' | 'submitted' | 'mined' | 'confirmed' | 'failed';
  current_hash: string | null;
  /** Every hash this nonce was signed with (a gas bump re-signs), oldest first. */
  hashes: JSONColumnType<string[], string | undefined, string>;
  raw_tx: string | null;
  max_fee_per_gas: string | null;
  max_priority_fee_per_gas: string | null;
  gas_limit: string | null;
  to_address: string;
  data: string;
  value: ColumnType<string, string | undefined, string>;
  brand_id: string | null;
  user_address: string | null;
  purpose: string;
  collection_id: string | null;
  gas_used: string | null;
  effective_gas_price: string | null;
  block_number: bigint | null;
  error: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  submitted_at: Timestamp | null;
}

/** `pending`: the row exists, the on-chain collection may not yet; `synced`: chain and row agree. */
export type PerkChainStatus = 'pending' | 'synced';

/** A perk: one PerkNFT collection; `id` is the on-chain collection id (docs/perks.md). */
export interface PerksTable {
  id: Generated<bigint>;
  brand_id: string;
  name: string;
  description: ColumnType<string, string | undefined, string>;
  category: ColumnType<string, string | undefined, string>;
  cost: ColumnType<bigint, bigint | number, bigint | number>;
  /** null = unlimited. */
  max_supply: ColumnType<bigint | null, bigint | number | null, bigint | number | null>;
  /** 0 = unlimited. */
  max_per_user: ColumnType<bigint, bigint | number, bigint | number>;
  charges_per_token: ColumnType<bigint, bigint | number, bigint | number>;
  active: boolean;
  image_url: string | null;
  /** The redemption window: from (null: at once) until (exclusive; null: no end). */
  starts_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  ends_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  chain_status: PerkChainStatus;
  chain_tx_hash: string | null;
  last_error: string | null;
  /** The perk's public id (a uuid; spec 2.3 `perk.id`), generated by the database. */
  public_id: Generated<string>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Archived: out of every catalogue, refused to redeem (reason `archived`) until restored. */
  archived_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** A member a brand blocked (docs/portal.md, "Members"): one row per identity key of their account. */
/** The Members list's read model per brand and member account (migration 2026_12_07_v01_member_totals). */
export interface BrandMemberTotalsTable {
  brand_id: string;
  member: string;
  earned: string;
  spent: string;
  balance: string;
  first_at: Date;
  last_at: Date;
}

/** A brand's tier table (migration 2026_12_07_y01_tiers; docs/tiers.md). */
export interface BrandTiersTable {
  brand_id: string;
  basis: 'earned' | 'spent';
  period: 'rolling_365' | 'calendar_year' | 'lifetime';
  grace_days: number;
  /** The tiers as the admin API takes them (`{name, threshold, multiplier, entryReward, perks?}`), ascending. */
  tiers: ColumnType<StoredTier[], string, string>;
  last_turn_at: Date | null;
  turn_claimed_at: Date | null;
  updated_at: Date;
}

export interface StoredTier {
  name: string;
  threshold: string;
  multiplier: number;
  entryReward: number;
  perks?: number[];
}

/** A member's held tier per brand (changes on promotion, and at the period's turn after any grace). */
export interface MemberTiersTable {
  brand_id: string;
  member: string;
  tier_index: number;
  tier_name: string;
  grace_until: Date | null;
  changed_at: Date;
}

/** An entry reward owed and paid: once per member and tier, ever (its primary key). */
export interface MemberTierEntriesTable {
  brand_id: string;
  member: string;
  tier_name: string;
  amount: number;
  event_id: string | null;
  created_at: Date;
}

/** A brand's referral program (migration 2026_12_08_g01_referrals; docs/referrals.md). */
export interface ReferralProgramsTable {
  brand_id: string;
  qualifying_event_type: string;
  min_value_minor: ColumnType<bigint | null, bigint | null, bigint | null>;
  referrer_reward: number;
  referee_reward: number;
  cap_per_referrer: number | null;
  cap_period_days: number | null;
  updated_at: Date;
}

/** A member's referral code at a brand: one per member, unique in the brand. */
export interface ReferralCodesTable {
  brand_id: string;
  member: string;
  code: string;
  created_at: Date;
}

export type ReferralStatus = 'attached' | 'paid' | 'refused' | 'reversed';

/** One referral per referee and brand: attached by the code, paid once by the qualifying event. */
export interface ReferralsTable {
  brand_id: string;
  referee: string;
  referrer: string;
  code: string;
  status: ReferralStatus;
  reason: string | null;
  qualifying_event_id: string | null;
  referrer_reward: number | null;
  referee_reward: number | null;
  referrer_event_id: string | null;
  referee_event_id: string | null;
  created_at: Date;
  qualified_at: Date | null;
  reversed_at: Date | null;
}

/** A referral refused, once per referee and reason (the stats' `refused`). */
export interface ReferralRefusalsTable {
  brand_id: string;
  referee: string;
  reason: string;
  referrer: string | null;
  code: string;
  created_at: Date;
}

export interface BrandMemberBlocksTable {
  brand_id: string;
  identity_key: string;
  account_key: string;
  reason: string;
  blocked_by: string;
  blocked_at: Timestamp;
}

/** `pending`: reserved (and maybe sent); `confirmed`: the claim is mined; `failed`: nothing was spent. */
export type PerkRedemptionStatus = 'pending' | 'confirmed' | 'failed';

/** One `POST /services/perks/redeem` (docs/perks.md "Redeeming a perk"). */
export interface PerkRedemptionsTable {
  id: string;
  brand_id: string;
  perk_id: bigint;
  /** The user identifier (email or synthetic email), lowercase. */
  user_key: string;
  platform: string;
  /** Lowercase custodial wallet that paid. */
  wallet_address: string;
  confirmation_code: string;
  status: PerkRedemptionStatus;
  cost: ColumnType<bigint, bigint | number, bigint | number>;
  /** The relayer sender's transaction id. */
  relay_tx_id: string | null;
  tx_hash: string | null;
  error: string | null;
  /** The caller's idempotency key: unique per brand and member among redemptions not failed. */
  idempotency_key: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type PerkConstraintKind = 'external_api' | 'min_balance' | 'chat_role';

/** An eligibility condition of a perk (docs/constraints.md). */
export interface PerkConstraintsTable {
  id: string;
  /** Insertion order (constraints are listed and evaluated in it). */
  seq: Generated<bigint>;
  perk_id: bigint;
  kind: PerkConstraintKind;
  config: Json<Record<string, unknown>>;
  /** Normalized URL of an `external_api` constraint (what invalidation matches); null for other kinds. */
  api_url: string | null;
  ttl_seconds: number;
  created_at: Timestamp;
}

/** A cached `external_api` answer per constraint and user. */
export interface ConstraintCacheTable {
  constraint_id: string;
  user_address: string;
  api_url: string;
  collection_id: bigint;
  eligible: boolean;
  detail: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
}

/** A chat member's roles as last reported (bots) or fetched (ChatRoleSource), per brand. */
export interface ChatMemberRolesTable {
  brand_id: string;
  platform: string;
  guild_id: string;
  platform_user_id: string;
  roles: Json<string[]>;
  refreshed_at: Timestamp;
}

export interface ActivityLogTable {
  id: Generated<bigint>;
  brand_id: string;
  /** The account the activity counts for: an email or a platform identity `<platform>_<id>@<domain>`. */
  user_key: string;
  /** Where it happened: `discord`, `telegram`, `x`, `web`, … */
  platform: string;
  /** `earned` (a confirmed reward), `spent`, `claimed` (a perk), … */
  kind: string;
  amount: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  /** What it refers to (event id, transaction id); unique per kind so a replay records nothing twice. */
  ref: string | null;
  detail: Json<Record<string, unknown>>;
  occurred_at: Timestamp;
}

export interface LeaderboardScoresTable {
  brand_id: string;
  metric: string;
  period: string;
  /** `YYYY-MM-DD` (UTC) start of the period; 1970-01-01 for all time. */
  period_start: ColumnType<string, string, string>;
  /** A platform, or `*` for all platforms together. */
  platform: string;
  user_key: string;
  value: ColumnType<bigint, bigint | number, bigint | number>;
  updated_at: Timestamp;
}

/** Per-user row the relay locks while it counts and reserves (spec 4.9 rules 5 and 7). */
export interface RelayQuotaTable {
  /** Lowercase wallet address. */
  user_address: string;
  last_request_at: Timestamp;
}

/** One accepted `POST /relay` (docs/relayer.md "Relay endpoint"): the hourly quota and in-flight claims count these. */
export interface RelayRequestsTable {
  id: string;
  /** Lowercase wallet address the call was made for. */
  user_address: string;
  /** The identity provider's user id of the caller. */
  user_id: string;
  to_address: string;
  function_name: string;
  /** Perk collection of a claim; null for other calls. */
  collection_id: string | null;
  /** `rejected`: refused by simulation, nothing sent; `failed`: sent and failed. */
  status: 'reserved' | 'submitted' | 'confirmed' | 'failed' | 'rejected';
  /** The relayer sender's transaction id. */
  tx_id: string | null;
  tx_hash: string | null;
  error: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A brand's streak settings (shared `StreakSettings`); brands without a row use the defaults. */
export interface BrandStreakSettingsTable {
  brand_id: string;
  settings: Json<Record<string, unknown>>;
  updated_at: Timestamp;
}

/** A user's streak at a brand; `user_key` is the lowercase user identifier (email or synthetic email). */
export interface StreaksTable {
  brand_id: string;
  user_key: string;
  streak_type: ColumnType<string, string | undefined, string>;
  current: number;
  longest: number;
  last_activity_at: Timestamp | null;
  /** UTC day `YYYY-MM-DD` of the last activity that counted. */
  last_counted_day: string | null;
  last_platform: string | null;
  freezes: number;
  freezes_used: number;
  last_freeze_used_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One daily check-in per brand, user and UTC day; `event_id` is the reward's event. */
export interface CheckinsTable {
  brand_id: string;
  user_key: string;
  day: string;
  platform: string;
  event_id: string;
  streak: number;
  multiplier: number;
  reward: ColumnType<bigint, bigint | number, bigint | number>;
  created_at: Timestamp;
}

/** A claimed streak milestone; one per brand, user and milestone length. */
export interface MilestoneClaimsTable {
  brand_id: string;
  user_key: string;
  milestone: number;
  bonus: ColumnType<bigint, bigint | number, bigint | number>;
  event_id: string;
  claimed_at: Timestamp;
}

/** An identity linked to an account (docs/identity-linking.md); unlinked identities have no row. */
export interface AccountLinksTable {
  identity_key: string;
  account_key: string;
  method: 'code' | 'email';
  /** The brand whose signed request made the link. */
  brand_id: string;
  linked_at: Timestamp;
}

/** A link code, stored as its SHA-256; one unused code per identity. */
export interface LinkCodesTable {
  code_hash: string;
  brand_id: string;
  identity_key: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  used_by: string | null;
}

/** How many users of one board partition have each value: ranks and totals without counting users. */
export interface LeaderboardValueCountsTable {
  brand_id: string;
  metric: string;
  period: string;
  period_start: string;
  platform: string;
  value: ColumnType<bigint, bigint | number, bigint | number>;
  users: ColumnType<bigint, bigint | number, bigint | number>;
}

export interface AchievementDefinitionsTable {
  brand_id: string;
  id: string;
  type: string;
  threshold: ColumnType<bigint, bigint | number, bigint | number>;
  name: string;
  description: string;
  /** Display order. */
  position: number;
}

export interface AchievementProgressTable {
  brand_id: string;
  user_key: string;
  type: string;
  value: ColumnType<bigint, bigint | number, bigint | number>;
  updated_at: Timestamp;
}

export interface AchievementUnlocksTable {
  brand_id: string;
  user_key: string;
  achievement_id: string;
  type: string;
  threshold: ColumnType<bigint, bigint | number, bigint | number>;
  name: string;
  unlocked_at: Timestamp;
}

/** A chat group linked to a brand by the bots' `/setup` (spec 2.4). */
export interface ChatGroupsTable {
  id: string;
  chat_group_id: string;
  brand_id: string;
  group_name: string;
  is_active: ColumnType<boolean, boolean | undefined, boolean>;
  config_metadata: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  setup_by: string;
  setup_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A hashtag campaign (spec 2.4); exactly one of reward and reward_multiplier is set. */
export interface HashtagCampaignsTable {
  id: string;
  brand_id: string;
  hashtag: string;
  reward: number | null;
  reward_multiplier: number | null;
  start_date: Timestamp;
  end_date: Timestamp;
  max_claims_per_user: number;
  exclude_brand_posts: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The display name a brand's clients last sent for a user (`metadata.displayName`), for its leaderboards. */
export interface UserDisplayNamesTable {
  brand_id: string;
  user_key: string;
  display_name: string;
  updated_at: Timestamp;
}

/** A brand onboarded through the agent API, by which key, with the details the agent gave. */
export interface AgentBrandOnboardingsTable {
  brand_id: string;
  key_id: string;
  business_name: string;
  contact_email: string;
  website: string;
  description: string;
  created_at: Timestamp;
}

/** An agent reward claimed once per (key, brand, type) (docs/agent-api/rewards.md); paid by event `event_id`. */
export interface AgentRewardClaimsTable {
  key_id: string;
  brand_id: string;
  reward_type: 'discovery' | 'onboarding';
  amount: ColumnType<bigint, bigint | number, bigint | number>;
  event_id: string;
  claimed_at: Timestamp;
}

/** A business that asked to hear about the program (docs/agent-api/growth.md, "request_growth_info"). */
export interface GrowthLeadsTable {
  /** Random (uuid): a lead id given to a public caller reveals nothing about other leads. */
  id: Generated<string>;
  business_name: string;
  contact_email: string;
  website: string;
  industry: string;
  request_count: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  last_requested_at: Timestamp;
}

/** An agent API key (docs/agent-api.md, "Keys"); the secret is encrypted with the SecretBox. */
export interface AgentKeysTable {
  key_id: string;
  name: string;
  secret_encrypted: string;
  brand_ids: ColumnType<string[], string[] | undefined, string[]>;
  can_manage_program: ColumnType<boolean, boolean | undefined, boolean>;
  can_onboard: ColumnType<boolean, boolean | undefined, boolean>;
  tier: ColumnType<
    'free' | 'pro' | 'enterprise',
    'free' | 'pro' | 'enterprise' | undefined,
    'free' | 'pro' | 'enterprise'
  >;
  rate_per_minute: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
}

/** A claimable amount (seed drops): `claimed` counts claims against `total_supply`. */
export interface DropsTable {
  id: string;
  brand_id: string;
  name: string;
  amount: bigint;
  total_supply: number;
  claimed: ColumnType<number, number | undefined, number>;
  per_user_limit: number;
  starts_at: Timestamp;
  ends_at: Timestamp;
  created_at: Timestamp;
}

/** One claim of a drop; `seq` numbers a user's claims of it (1 … per-user limit). */
export interface DropClaimsTable {
  drop_id: string;
  user_key: string;
  seq: number;
  event_id: string;
  claimed_at: Timestamp;
}

/** A brand's connected Shopify shop (migration 2026_12_07_x01_shopify; docs/shop-program.md "Shopify"). */
export interface ShopifyShopsTable {
  brand_id: string;
  /** `NAME.myshopify.com`, lower case: deliveries must name it in X-Shopify-Shop-Domain. */
  shop_domain: string;
  /** The webhook signing secret (SecretBox), never stored or logged in clear. */
  secret_encrypted: string;
  /** Which order amount is the purchase's value. */
  value_source: 'subtotal' | 'total';
  /** Whether customers/create earns `account_creation`. */
  customers: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type ShopifyDeliveryResult =
  | 'processing'
  | 'rewarded'
  | 'duplicate'
  | 'ignored'
  | 'failed'
  | 'reversed'
  | 'waiting';

/** One authentic delivery from the brand's shop, once per X-Shopify-Webhook-Id. */
export interface ShopifyDeliveriesTable {
  id: string;
  brand_id: string;
  webhook_id: string;
  topic: string;
  shop_domain: string;
  result: ShopifyDeliveryResult;
  reason: string | null;
  order_id: string | null;
  event_id: string | null;
  reward_amount: ColumnType<string | null, bigint | number | null | undefined, bigint | number | null>;
  received_at: Timestamp;
  /** refunds/create: the Shopify refund id (its reversal is `shopify-refund-<id>`). */
  refund_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** refunds/create: what it refunds of the order's value, in minor units (kept while `waiting`). */
  refund_minor: ColumnType<string | null, bigint | null | undefined, bigint | null>;
  refund_currency: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface DB {
  shopify_shops: ShopifyShopsTable;
  shopify_deliveries: ShopifyDeliveriesTable;
  drops: DropsTable;
  agent_keys: AgentKeysTable;
  agent_brand_onboardings: AgentBrandOnboardingsTable;
  agent_reward_claims: AgentRewardClaimsTable;
  growth_leads: GrowthLeadsTable;
  drop_claims: DropClaimsTable;
  user_display_names: UserDisplayNamesTable;
  chat_groups: ChatGroupsTable;
  hashtag_campaigns: HashtagCampaignsTable;
  achievement_definitions: AchievementDefinitionsTable;
  achievement_progress: AchievementProgressTable;
  achievement_unlocks: AchievementUnlocksTable;
  leaderboard_value_counts: LeaderboardValueCountsTable;
  activity_log: ActivityLogTable;
  leaderboard_scores: LeaderboardScoresTable;
  brands: BrandsTable;
  event_rules: EventRulesTable;
  users: UsersTable;
  events: EventsTable;
  event_external_ids: EventExternalIdsTable;
  claim_counters: ClaimCountersTable;
  reward_mints: RewardMintsTable;
  reward_reversals: RewardReversalsTable;
  member_debts: MemberDebtsTable;
  brand_reversal_days: BrandReversalDaysTable;
  chain_txs: ChainTxsTable;
  chain_deployments: ChainDeploymentsTable;
  used_signatures: UsedSignaturesTable;
  audit_log: AuditLogTable;
  payments: PaymentsTable;
  local_checkout_sessions: LocalCheckoutSessionsTable;
  payment_webhook_events: PaymentWebhookEventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  oauth_identities: OAuthIdentitiesTable;
  perks: PerksTable;
  brand_member_blocks: BrandMemberBlocksTable;
  brand_member_totals: BrandMemberTotalsTable;
  brand_tiers: BrandTiersTable;
  member_tiers: MemberTiersTable;
  member_tier_entries: MemberTierEntriesTable;
  referral_programs: ReferralProgramsTable;
  referral_codes: ReferralCodesTable;
  referrals: ReferralsTable;
  referral_refusals: ReferralRefusalsTable;
  perk_redemptions: PerkRedemptionsTable;
  perk_constraints: PerkConstraintsTable;
  constraint_cache: ConstraintCacheTable;
  chat_member_roles: ChatMemberRolesTable;
  relay_transactions: RelayTransactionsTable;
  relay_quota: RelayQuotaTable;
  relay_requests: RelayRequestsTable;
  brand_streak_settings: BrandStreakSettingsTable;
  streaks: StreaksTable;
  checkins: CheckinsTable;
  milestone_claims: MilestoneClaimsTable;
  account_links: AccountLinksTable;
  link_codes: LinkCodesTable;
  portal_users: PortalUsersTable;
  portal_memberships: PortalMembershipsTable;
  portal_sessions: PortalSessionsTable;
  portal_links: PortalLinksTable;
}
