import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code from a migration.

// The Members list's read model (docs/portal.md, "Members"; issue 33 §12): per brand and member ACCOUNT (an
// identity resolved through account_links, as modules/accounts does), the member ledger's figures kept by the
// database as rows are written, so a list sorted by any of them is an index range at 100k members:
//
// - earned: the rewards of accepted events (the member ledger's `earned`);
// - spent: the cost of redemptions pending or confirmed (the ledger's `redeemed` + `redeeming`);
// - balance: earned − spent, the brand's part of the member's pts (not the wallet's, which is one token
//   across brands and may hold bought pts);
// - first_at / last_at: the first and last event (accepted or refused) or redemption: joined and last active.
//
// Events are append-only (a trigger refuses UPDATE and DELETE), so their statement trigger adds; a
// redemption's trigger adds the change of its cost's state; a link, relink or unlink of an identity recomputes
// the accounts it touches from the base tables. Agent identities are not members and are left out.

const NOT_AGENT = (column: string) => `${column} NOT LIKE 'agent:%' AND ${column} NOT LIKE 'agent\\_%'`;

const statements = [
  `CREATE TABLE brand_member_totals (
     brand_id text NOT NULL,
     -- Byte order (C): the same order on PGlite and PostgreSQL whatever the database's locale.
     member text COLLATE "C" NOT NULL,
     earned numeric NOT NULL DEFAULT 0,
     spent numeric NOT NULL DEFAULT 0,
     balance numeric NOT NULL DEFAULT 0,
     first_at timestamptz NOT NULL,
     last_at timestamptz NOT NULL,
     PRIMARY KEY (brand_id, member)
   )`,
  // One index per sort: keyset pages in either direction are index ranges.
  'CREATE INDEX brand_member_totals_earned_idx ON brand_member_totals (brand_id, earned, member)',
  'CREATE INDEX brand_member_totals_balance_idx ON brand_member_totals (brand_id, balance, member)',
  'CREATE INDEX brand_member_totals_first_idx ON brand_member_totals (brand_id, first_at, member)',
  'CREATE INDEX brand_member_totals_last_idx ON brand_member_totals (brand_id, last_at, member)',
  // The existing history, folded at once.
  `INSERT INTO brand_member_totals (brand_id, member, earned, spent, balance, first_at, last_at)
   SELECT x.brand_id, coalesce(l.account_key, x.k), sum(x.earned), sum(x.spent), sum(x.earned) - sum(x.spent),
          min(x.first_at), max(x.last_at)
     FROM (SELECT brand_id, user_email AS k, coalesce(sum(reward_amount) FILTER (WHERE status = 'accepted'), 0) AS earned,
                  0 AS spent, min(created_at) AS first_at, max(created_at) AS last_at
             FROM events WHERE ${NOT_AGENT('user_email')} GROUP BY 1, 2
           UNION ALL
           SELECT brand_id, user_key, 0, coalesce(sum(cost) FILTER (WHERE status IN ('pending', 'confirmed')), 0),
                  min(created_at), max(created_at)
             FROM perk_redemptions WHERE ${NOT_AGENT('user_key')} GROUP BY 1, 2) AS x
     LEFT JOIN account_links l ON l.identity_key = x.k
    GROUP BY 1, 2`,
  `CREATE FUNCTION pts_member_totals_events() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO brand_member_totals AS t (brand_id, member, earned, spent, balance, first_at, last_at)
     SELECT e.brand_id, coalesce(l.account_key, e.user_email),
            coalesce(sum(e.reward_amount) FILTER (WHERE e.status = 'accepted'), 0), 0,
            coalesce(sum(e.reward_amount) FILTER (WHERE e.status = 'accepted'), 0),
            min(e.created_at), max(e.created_at)
       FROM new_rows e LEFT JOIN account_links l ON l.identity_key = e.user_email
      WHERE ${NOT_AGENT('e.user_email')}
      GROUP BY 1, 2 ORDER BY 1, 2
     ON CONFLICT (brand_id, member) DO UPDATE
        SET earned = t.earned + excluded.earned, balance = t.balance + excluded.earned,
            first_at = least(t.first_at, excluded.first_at), last_at = greatest(t.last_at, excluded.last_at);
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER events_member_totals AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows
     FOR EACH STATEMENT EXECUTE FUNCTION pts_member_totals_events()`,
  `CREATE FUNCTION pts_member_totals_redemption() RETURNS trigger LANGUAGE plpgsql AS $$
   DECLARE
     delta numeric := CASE WHEN NEW.status IN ('pending', 'confirmed') THEN NEW.cost ELSE 0 END;
   BEGIN
     IF NEW.user_key LIKE 'agent:%' OR NEW.user_key LIKE 'agent\\_%' THEN RETURN NULL; END IF;
     IF TG_OP = 'UPDATE' THEN
       delta := delta - CASE WHEN OLD.status IN ('pending', 'confirmed') THEN OLD.cost ELSE 0 END;
       IF delta = 0 THEN RETURN NULL; END IF;
     END IF;
     INSERT INTO brand_member_totals AS t (brand_id, member, earned, spent, balance, first_at, last_at)
     SELECT NEW.brand_id, coalesce((SELECT account_key FROM account_links WHERE identity_key = NEW.user_key), NEW.user_key),
            0, delta, -delta, NEW.created_at, NEW.created_at
     ON CONFLICT (brand_id, member) DO UPDATE
        SET spent = t.spent + excluded.spent, balance = t.balance + excluded.balance,
            first_at = least(t.first_at, excluded.first_at), last_at = greatest(t.last_at, excluded.last_at);
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER perk_redemptions_member_totals AFTER INSERT OR UPDATE OF status, cost ON perk_redemptions
     FOR EACH ROW EXECUTE FUNCTION pts_member_totals_redemption()`,
  // An account's rows recomputed from its identities' events and redemptions (none when the key is itself
  // linked to another account: its history is that account's).
  `CREATE FUNCTION pts_member_totals_refresh(account text) RETURNS void LANGUAGE plpgsql AS $$
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
               FROM perk_redemptions WHERE user_key = ANY (ids) GROUP BY 1) AS x
      GROUP BY brand_id;
   END $$`,
  `CREATE FUNCTION pts_member_totals_link() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF TG_OP IN ('INSERT', 'UPDATE') THEN
       PERFORM pts_member_totals_refresh(NEW.identity_key);
       PERFORM pts_member_totals_refresh(NEW.account_key);
     END IF;
     IF TG_OP IN ('UPDATE', 'DELETE') THEN
       PERFORM pts_member_totals_refresh(OLD.identity_key);
       PERFORM pts_member_totals_refresh(OLD.account_key);
     END IF;
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER account_links_member_totals AFTER INSERT OR UPDATE OR DELETE ON account_links
     FOR EACH ROW EXECUTE FUNCTION pts_member_totals_link()`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  // One statement per query: PGlite's extended protocol rejects multi-statement strings.
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER account_links_member_totals ON account_links`.execute(db);
  await sql`DROP TRIGGER perk_redemptions_member_totals ON perk_redemptions`.execute(db);
  await sql`DROP TRIGGER events_member_totals ON events`.execute(db);
  await sql`DROP FUNCTION pts_member_totals_link()`.execute(db);
  await sql`DROP FUNCTION pts_member_totals_refresh(text)`.execute(db);
  await sql`DROP FUNCTION pts_member_totals_redemption()`.execute(db);
  await sql`DROP FUNCTION pts_member_totals_events()`.execute(db);
  await sql`DROP TABLE brand_member_totals`.execute(db);
}
