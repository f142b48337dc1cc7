import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// Reversals (issue 35 §2, docs/shop-program.md "Refunds and reversals"): a brand takes back all or part of an
// event's reward. One row per reversal, unique per brand by the brand's reversal id (a repeated refund is applied
// once). `pts` is what the reversal takes back from the member's earnings, fixed when it is recorded (the
// cumulative-floor share of the event's reward, shared/src/rules/reversals.ts); its chain side (`reverseBatch`,
// sent by the reverser outbox on the minter's signer) splits it into `taken` (burned from the wallet) and `debt`
// (the member had spent it): both are known once the transaction's `RewardReversed` event is read.
//
// A member's debt at a brand is `member_debts`: added when a reversal is confirmed with debt, paid off by the
// member's next rewards (the part of a reward that pays debt is not minted: reward_mints.debt_paid).
//
// The member totals read model (brand_member_totals) takes a reversal's pts off `earned` and `balance` as it is
// recorded, so every list and sort sees one ledger.

const NOT_AGENT = (column: string) => `${column} NOT LIKE 'agent:%' AND ${column} NOT LIKE 'agent\\_%'`;

const REVERSALS_PART = `
             UNION ALL
             SELECT brand_id, -sum(pts), 0, min(created_at), max(created_at)
               FROM reward_reversals WHERE user_email = ANY (ids) GROUP BY 1`;

/** The member totals' recompute of one account (2026_12_07_v01), with or without reversals. */
const refreshFunction = (
  withReversals: boolean,
) => `CREATE OR REPLACE FUNCTION pts_member_totals_refresh(account text) RETURNS void LANGUAGE plpgsql AS $$
   DECLARE
     ids text[];
   BEGIN
     DELETE FROM brand_member_totals WHERE member = account;
     IF account LIKE 'agent:%' OR account LIKE 'agent\\_%'
        OR EXISTS (SELECT 1 FROM account_links WHERE identity_key = account AND account_key <> account) THEN
       RETURN;
     END IF;
     ids := ARRAY(SELECT account UNION SELECT identity_key FROM account_links WHERE account_key = account);
     INSERT INTO brand_member_totals (brand_id, member, earned, spent, balance, first_at, last_at)
     SELECT brand_id, account, sum(earned), sum(spent), sum(earned) - sum(spent), min(first_at), max(last_at)
       FROM (SELECT brand_id, coalesce(sum(reward_amount) FILTER (WHERE status = 'accepted'), 0) AS earned,
                    0 AS spent, min(created_at) AS first_at, max(created_at) AS last_at
               FROM events WHERE user_email = ANY (ids) GROUP BY 1
             UNION ALL
             SELECT brand_id, 0, coalesce(sum(cost) FILTER (WHERE status IN ('pending', 'confirmed')), 0),
                    min(created_at), max(created_at)
               FROM perk_redemptions WHERE user_key = ANY (ids) GROUP BY 1
${withReversals ? REVERSALS_PART : ''}) AS x
      GROUP BY brand_id;
   END $$`;

const statements = [
  `CREATE TABLE reward_reversals (
     id uuid PRIMARY KEY,
     brand_id text NOT NULL,
     reversal_id text NOT NULL,
     event_id uuid NOT NULL REFERENCES events(id),
     user_email text NOT NULL,
     wallet_address text,
     pts bigint NOT NULL CHECK (pts >= 0),
     refunded_minor bigint,
     refunded_total_minor bigint,
     currency text,
     status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'submitted', 'confirmed')),
     taken bigint,
     debt bigint,
     chain_tx_id bigint REFERENCES chain_txs(id),
     transaction_hash text,
     attempts integer NOT NULL DEFAULT 0,
     last_error text,
     created_at timestamptz NOT NULL,
     updated_at timestamptz NOT NULL,
     confirmed_at timestamptz,
     UNIQUE (brand_id, reversal_id),
     CHECK ((taken IS NULL) = (debt IS NULL)),
     CHECK (taken IS NULL OR (taken >= 0 AND debt >= 0 AND taken + debt <= pts))
   )`,
  'CREATE INDEX reward_reversals_event_idx ON reward_reversals (event_id)',
  'CREATE INDEX reward_reversals_member_idx ON reward_reversals (user_email, brand_id)',
  `CREATE INDEX reward_reversals_open_idx ON reward_reversals (created_at) WHERE status <> 'confirmed'`,
  `CREATE TABLE member_debts (
     brand_id text NOT NULL,
     wallet_address text NOT NULL,
     debt bigint NOT NULL DEFAULT 0 CHECK (debt >= 0),
     updated_at timestamptz NOT NULL,
     PRIMARY KEY (brand_id, wallet_address)
   )`,
  'ALTER TABLE reward_mints ADD COLUMN debt_paid bigint NOT NULL DEFAULT 0',
  `CREATE FUNCTION pts_member_totals_reversal() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF ${NOT_AGENT('NEW.user_email')} THEN
       UPDATE brand_member_totals
          SET earned = earned - NEW.pts, balance = balance - NEW.pts
        WHERE brand_id = NEW.brand_id
          AND member = coalesce((SELECT account_key FROM account_links WHERE identity_key = NEW.user_email), NEW.user_email);
     END IF;
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER reward_reversals_member_totals AFTER INSERT ON reward_reversals
     FOR EACH ROW EXECUTE FUNCTION pts_member_totals_reversal()`,
  // A link, relink or unlink recomputes an account from its base tables: reversals are one of them now.
  refreshFunction(true),
];

export async function up(db: Kysely<unknown>): Promise<void> {
  // One statement per query: PGlite's extended protocol rejects multi-statement strings.
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw(refreshFunction(false)).execute(db);
  await sql`DROP TRIGGER reward_reversals_member_totals ON reward_reversals`.execute(db);
  await sql`DROP FUNCTION pts_member_totals_reversal()`.execute(db);
  await sql`ALTER TABLE reward_mints DROP COLUMN debt_paid`.execute(db);
  await sql`DROP TABLE member_debts`.execute(db);
  await sql`DROP TABLE reward_reversals`.execute(db);
}
