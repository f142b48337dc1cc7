import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

const ddl = `
    CREATE TABLE payments (
      session_id text PRIMARY KEY,
      provider text NOT NULL CHECK (provider IN ('local', 'stripe')),
      brand_id text NOT NULL,
      wallet_address text NOT NULL,
      user_email text,
      usd_cents bigint NOT NULL CHECK (usd_cents > 0),
      pts_amount bigint NOT NULL CHECK (pts_amount > 0),
      currency text NOT NULL,
      status text NOT NULL CHECK (status IN ('created', 'paid', 'fulfilled', 'canceled')),
      payment_intent_id text,
      reward_mint_id uuid UNIQUE REFERENCES reward_mints(id),
      last_error text,
      paid_at timestamptz,
      fulfilled_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((status = 'fulfilled') = (reward_mint_id IS NOT NULL))
    );
    CREATE INDEX payments_brand_created_idx ON payments (brand_id, created_at);

    CREATE TABLE local_checkout_sessions (
      id text PRIMARY KEY,
      brand_id text NOT NULL,
      brand_name text NOT NULL,
      amount_total bigint NOT NULL,
      currency text NOT NULL,
      customer_email text NOT NULL,
      success_url text NOT NULL,
      cancel_url text NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}',
      status text NOT NULL CHECK (status IN ('open', 'complete', 'expired')),
      payment_status text NOT NULL CHECK (payment_status IN ('paid', 'unpaid', 'no_payment_required')),
      payment_intent_id text,
      form_token text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE payment_webhook_events (
      event_id text PRIMARY KEY,
      provider text NOT NULL,
      type text NOT NULL,
      session_id text,
      outcome text NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now()
    )
`;

export async function up(db: Kysely<unknown>): Promise<void> {
  // One statement per query: PGlite's extended protocol rejects multi-statement strings.
  for (const statement of ddl
    .split(/;\s*\n/)
    .map((part) => part.trim())
    .filter(Boolean)) {
    await sql.raw(statement).execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw('DROP TABLE payment_webhook_events, local_checkout_sessions, payments').execute(db);
}
