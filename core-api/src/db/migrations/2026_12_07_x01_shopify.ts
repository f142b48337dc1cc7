import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Orders from Shopify (issue 35 §3, docs/shop-program.md "Shopify"): one connected shop per brand, with its
// webhook secret encrypted at rest, and every authentic delivery the shop sent (deduplicated by its
// X-Shopify-Webhook-Id), with what pts did with it.

const statements = [
  `CREATE TABLE shopify_shops (
     brand_id text PRIMARY KEY REFERENCES brands(address),
     shop_domain text NOT NULL,
     secret_encrypted text NOT NULL,
     value_source text NOT NULL CHECK (value_source IN ('subtotal', 'total')),
     customers boolean NOT NULL DEFAULT false,
     created_at timestamptz NOT NULL,
     updated_at timestamptz NOT NULL
   )`,
  `CREATE TABLE shopify_deliveries (
     id uuid PRIMARY KEY,
     brand_id text NOT NULL REFERENCES brands(address),
     webhook_id text NOT NULL,
     topic text NOT NULL,
     shop_domain text NOT NULL,
     result text NOT NULL CHECK (result IN ('processing', 'rewarded', 'duplicate', 'ignored', 'failed')),
     reason text,
     order_id text,
     event_id uuid,
     reward_amount bigint,
     received_at timestamptz NOT NULL,
     UNIQUE (brand_id, webhook_id)
   )`,
  'CREATE INDEX shopify_deliveries_recent_idx ON shopify_deliveries (brand_id, received_at DESC, id)',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw('DROP TABLE shopify_deliveries').execute(db);
  await sql.raw('DROP TABLE shopify_shops').execute(db);
}
