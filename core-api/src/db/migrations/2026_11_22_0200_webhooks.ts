import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

const ddl = `
    CREATE TABLE webhook_endpoints (
      brand_id text PRIMARY KEY REFERENCES brands(address),
      url text NOT NULL,
      secret_encrypted text NOT NULL,
      active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY,
      event_id text NOT NULL UNIQUE,
      brand_id text NOT NULL,
      type text NOT NULL,
      body text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'sending', 'delivered', 'failed', 'dead')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
      WHERE status IN ('pending', 'sending', 'failed');
    CREATE INDEX webhook_deliveries_brand_idx ON webhook_deliveries (brand_id, created_at)
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
  await sql.raw('DROP TABLE webhook_deliveries, webhook_endpoints').execute(db);
}
