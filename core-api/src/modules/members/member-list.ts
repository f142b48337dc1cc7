import {
  AppError,
  IDENTITY_PLATFORMS,
  type MemberExportQuery,
  type MemberListEntry,
  type MemberListQuery,
  type MemberListSort,
} from '@pts/shared';
import { type RawBuilder, sql } from 'kysely';
import type { Database } from '../../db/database.ts';

// The Members list (docs/portal.md, "Members"; issue 33 §12): a brand's members — accounts with their
// identities, as modules/accounts resolves them — with the member ledger's figures, read from the
// brand_member_totals read model the database keeps (migration 2026_12_07_v01_member_totals). Pages are
// keyset ranges over one index per sort, so page 5,000 of 100k members costs what page 1 does; the export
// reads the same pages one after another and never holds more than one.

/** The read model's column for each sort; the member key breaks ties so every order is total. */
const SORT_COLUMNS: Record<MemberListSort, { column: string; type: 'numeric' | 'timestamptz' }> = {
  balance: { column: 'balance', type: 'numeric' },
  earned: { column: 'earned', type: 'numeric' },
  lastActivity: { column: 'last_at', type: 'timestamptz' },
  joined: { column: 'first_at', type: 'timestamptz' },
};

/** Members an export reads per statement. */
export const MEMBER_EXPORT_BATCH = 1000;

/** `%`, `_` and `\` match themselves in a LIKE pattern (with `ESCAPE '\'`). */
export const escapeLike = (value: string) => value.replace(/[\\%_]/g, (char) => `\\${char}`);

type Filter = Pick<MemberListQuery, 'sort' | 'order' | 'q'>;
type Position = { value: string; member: string };

interface CursorBody {
  s: MemberListSort;
  o: 'asc' | 'desc';
  q: string | null;
  v: string;
  m: string;
}

function encodeCursor(filter: Filter, at: Position): string {
  const body: CursorBody = { s: filter.sort, o: filter.order, q: filter.q ?? null, v: at.value, m: at.member };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

function decodeCursor(filter: Filter, cursor: string): Position {
  let body: Partial<CursorBody> | undefined;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    body = undefined;
  }
  if (!body || typeof body.v !== 'string' || typeof body.m !== 'string') {
    throw new AppError('VALIDATION_ERROR', 'cursor is not one this list gave: pass the `nextCursor` of the last page', {
      field: 'cursor',
    });
  }
  if (body.s !== filter.sort || body.o !== filter.order || (body.q ?? null) !== (filter.q ?? null)) {
    throw new AppError(
      'VALIDATION_ERROR',
      'cursor belongs to another sort, order or search: start again from the first page (no cursor)',
      { field: 'cursor' },
    );
  }
  if (SORT_COLUMNS[filter.sort].type === 'numeric' ? !/^-?\d+$/.test(body.v) : Number.isNaN(Date.parse(body.v))) {
    throw new AppError('VALIDATION_ERROR', 'cursor is damaged: start again from the first page (no cursor)', {
      field: 'cursor',
    });
  }
  return { value: body.v, member: body.m };
}

/**
 * The search as SQL: the text anywhere in the account key, in an identity linked to it, or (when it could be
 * part of one) in its wallet address; `discord:123` also finds `discord_123@…`. Metacharacters are literal.
 */
function searchCondition(q: string): RawBuilder<unknown> {
  const text = q.trim().toLowerCase();
  const patterns = [`%${escapeLike(text)}%`];
  const platformId = /^([a-z]+):(.+)$/.exec(text);
  if (platformId && (IDENTITY_PLATFORMS as readonly string[]).includes(platformId[1]!)) {
    const platforms = platformId[1] === 'x' ? ['x', 'twitter'] : [platformId[1]!];
    for (const platform of platforms) patterns.push(`${platform}\\_${escapeLike(platformId[2]!)}@%`);
  }
  const like = (column: RawBuilder<unknown>) =>
    sql`(${sql.join(
      patterns.map((pattern) => sql`${column} LIKE ${pattern} ESCAPE '\\'`),
      sql` OR `,
    )})`;
  const conditions = [
    like(sql`lower(t.member)`),
    sql`t.member IN (SELECT account_key FROM account_links WHERE ${like(sql`lower(identity_key)`)})`,
  ];
  // Only a run of hex digits can be part of a wallet: other texts never read the users table.
  if (/^(0x)?[0-9a-f]+$/.test(text)) {
    conditions.push(sql`t.member IN (
      SELECT coalesce(l.account_key, u.email) FROM users u LEFT JOIN account_links l ON l.identity_key = u.email
       WHERE lower(u.wallet_address) LIKE ${`%${text}%`})`);
  }
  return sql`(${sql.join(conditions, sql` OR `)})`;
}

type TotalsRow = {
  member: string;
  earned: string;
  spent: string;
  balance: string;
  first_at: string;
  last_at: string;
  position: string;
};

const isoText = (column: string) => sql.raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`);

/** One keyset page of the read model: `limit` rows after `after` in the filter's order. */
async function readTotalsPage(
  db: Database,
  brandId: string,
  filter: Filter,
  after: Position | undefined,
  limit: number,
): Promise<TotalsRow[]> {
  const { column, type } = SORT_COLUMNS[filter.sort];
  const col = sql.ref(`t.${column}`);
  const direction = sql.raw(filter.order === 'desc' ? 'DESC' : 'ASC');
  const keyset = after
    ? sql`AND (${col}, t.member) ${sql.raw(filter.order === 'desc' ? '<' : '>')} (${after.value}::${sql.raw(type)}, ${after.member})`
    : sql``;
  const search = filter.q ? sql`AND ${searchCondition(filter.q)}` : sql``;
  const position = type === 'numeric' ? sql`${col}::text` : isoText(`t.${column}`);
  const { rows } = await sql<TotalsRow>`
    SELECT t.member, t.earned::text AS earned, t.spent::text AS spent, t.balance::text AS balance,
           ${isoText('t.first_at')} AS first_at, ${isoText('t.last_at')} AS last_at, ${position} AS position
      FROM brand_member_totals t
     WHERE t.brand_id = ${brandId} ${keyset} ${search}
     ORDER BY ${col} ${direction}, t.member ${direction}
     LIMIT ${limit}`.execute(db);
  return rows;
}

/** The rows as list entries: each account's identities and wallet, in two statements per page. */
async function entriesOf(db: Database, rows: TotalsRow[]): Promise<MemberListEntry[]> {
  if (rows.length === 0) return [];
  const members = rows.map((row) => row.member);
  const [links, wallets] = await Promise.all([
    db
      .selectFrom('account_links')
      .select(['account_key', 'identity_key'])
      .where('account_key', 'in', members)
      .orderBy('linked_at')
      .orderBy('identity_key')
      .execute(),
    db
      .selectFrom('users')
      .select(['email', 'wallet_address'])
      .where('email', 'in', members)
      .where('wallet_address', 'is not', null)
      .execute(),
  ]);
  const identities = new Map<string, string[]>();
  for (const link of links) {
    if (link.identity_key === link.account_key) continue;
    identities.set(link.account_key, [...(identities.get(link.account_key) ?? []), link.identity_key]);
  }
  const walletOf = new Map(wallets.map((row) => [row.email, row.wallet_address as string]));
  return rows.map((row) => ({
    accountKey: row.member,
    identityKeys: [row.member, ...(identities.get(row.member) ?? [])],
    walletAddress: walletOf.get(row.member) ?? null,
    balance: Number(row.balance),
    earned: Number(row.earned),
    spent: Number(row.spent),
    joinedAt: row.first_at,
    lastActivityAt: row.last_at,
  }));
}

/** One page of the brand's members in the asked order (search optional); `nextCursor` null on the last. */
export async function listMembers(
  db: Database,
  brandId: string,
  query: MemberListQuery,
): Promise<{ members: MemberListEntry[]; nextCursor: string | null }> {
  const after = query.cursor ? decodeCursor(query, query.cursor) : undefined;
  // One more row than asked says whether another page follows.
  const rows = await readTotalsPage(db, brandId, query, after, query.limit + 1);
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  const nextCursor =
    rows.length > query.limit && last ? encodeCursor(query, { value: last.position, member: last.member }) : null;
  return { members: await entriesOf(db, page), nextCursor };
}

/** Every member in the asked order, a page of MEMBER_EXPORT_BATCH at a time, each read when the last was used. */
export async function* readAllMembers(
  db: Database,
  brandId: string,
  filter: MemberExportQuery,
): AsyncGenerator<MemberListEntry[]> {
  let after: Position | undefined;
  for (;;) {
    const rows = await readTotalsPage(db, brandId, filter, after, MEMBER_EXPORT_BATCH);
    if (rows.length === 0) return;
    yield await entriesOf(db, rows);
    if (rows.length < MEMBER_EXPORT_BATCH) return;
    const last = rows.at(-1)!;
    after = { value: last.position, member: last.member };
  }
}
