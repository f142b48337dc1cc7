import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Shopify refunds become reversals (issue 35, docs/shop-program.md "Refunds from Shopify"): a delivery may now be
// `reversed` (the refund took points back) or `waiting` (the refund came before its order: it is applied when
// the order's orders/paid arrives). A waiting refund keeps what it refunds, so nothing of its body is re-read.

const up_ = [
  'ALTER TABLE shopify_deliveries DROP CONSTRAINT shopify_deliveries_result_check',
  `ALTER TABLE shopify_deliveries ADD CONSTRAINT shopify_deliveries_result_check
     CHECK (result IN ('processing', 'rewarded', 'duplicate', 'ignored', 'failed', 'reversed', 'waiting'))`,
  'ALTER TABLE shopify_deliveries ADD COLUMN refund_id text',
  'ALTER TABLE shopify_deliveries ADD COLUMN refund_minor bigint',
  'ALTER TABLE shopify_deliveries ADD COLUMN refund_currency text',
  `CREATE INDEX shopify_deliveries_waiting_idx ON shopify_deliveries (brand_id, order_id)
     WHERE result = 'waiting'`,
];

const down_ = [
  'DROP INDEX shopify_deliveries_waiting_idx',
  "DELETE FROM shopify_deliveries WHERE result IN ('reversed', 'waiting')",
  'ALTER TABLE shopify_deliveries DROP COLUMN refund_currency',
  'ALTER TABLE shopify_deliveries DROP COLUMN refund_minor',
  'ALTER TABLE shopify_deliveries DROP COLUMN refund_id',
  'ALTER TABLE shopify_deliveries DROP CONSTRAINT shopify_deliveries_result_check',
  `ALTER TABLE shopify_deliveries ADD CONSTRAINT shopify_deliveries_result_check
     CHECK (result IN ('processing', 'rewarded', 'duplicate', 'ignored', 'failed'))`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of up_) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of down_) await sql.raw(statement).execute(db);
}
