import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// A rotated security key may stay valid for a grace period so a brand's servers, plugin and bots can move to
// the new key one by one. The old key is kept as the current one is: hashed (to recognise it when presented,
// bot `/setup`) and encrypted (HMAC verification needs the key itself), with the moment it stops verifying.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE brands
              ADD COLUMN previous_security_key_hash text,
              ADD COLUMN previous_security_key_encrypted text,
              ADD COLUMN previous_security_key_expires_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE brands
              DROP COLUMN previous_security_key_hash,
              DROP COLUMN previous_security_key_encrypted,
              DROP COLUMN previous_security_key_expires_at`.execute(db);
}
