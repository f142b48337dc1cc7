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
  /** SHA-256 of the security key: compared when a caller presents the key itself (bot `/setup`). */
  security_key_hash: string;
  /** AES-256-GCM encryption of the security key under the master key: needed to verify HMAC signatures. */
  security_key_encrypted: string;
  api_key_hash: string;
  tier: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

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
  created_at: Timestamp;
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
}

export interface AuditLogTable {
  id: Generated<bigint>;
  actor: string;
  action: string;
  subject: string | null;
  details: Json<Record<string, unknown>>;
  created_at: Timestamp;
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

export interface DB {
  brands: BrandsTable;
  event_rules: EventRulesTable;
  users: UsersTable;
  events: EventsTable;
  claim_counters: ClaimCountersTable;
  reward_mints: RewardMintsTable;
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
}
