import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { type BoundToDatabase, bindDatabase } from '../agent-services.ts';

/** A brand the question names: by address, by name or by website domain. */
export interface MentionedBrand {
  brandId: string;
  name: string;
  domain: string;
}

/** At most this many brands are taken from one question (compare takes 5). */
const MAX_MENTIONED = 10;

/**
 * The real brands a question names: an address (`0x…40 hex`), or a name / website domain (at least 3
 * characters) that appears in the question, case-insensitively. Matching runs in SQL (`position`), so no
 * brand list is loaded; longer names first so "Acme Travel" beats "Acme".
 */
export async function findMentionedBrands(db: Database, question: string): Promise<MentionedBrand[]> {
  const text = question.toLowerCase();
  const addresses = [...new Set(text.match(/0x[0-9a-f]{40}/g) ?? [])];
  const rows = await db
    .selectFrom('brands')
    .select(['address', 'name', 'website_domain'])
    .where((eb) =>
      eb.or([
        ...(addresses.length > 0 ? [eb('address', 'in', addresses)] : []),
        eb.and([
          sql<boolean>`length(${eb.ref('name')}) >= 3`,
          sql<boolean>`position(lower(${eb.ref('name')}) in ${text}) > 0`,
        ]),
        eb.and([
          sql<boolean>`length(${eb.ref('website_domain')}) >= 3`,
          sql<boolean>`position(lower(${eb.ref('website_domain')}) in ${text}) > 0`,
        ]),
      ]),
    )
    .orderBy(sql`length(${sql.ref('name')})`, 'desc')
    .orderBy('address')
    .limit(MAX_MENTIONED)
    .execute();
  // In the order the question names them (compare lists read naturally).
  const at = (row: (typeof rows)[number]) => {
    const positions = [row.address, row.name.toLowerCase(), row.website_domain.toLowerCase()]
      .map((needle) => text.indexOf(needle))
      .filter((index) => index >= 0);
    return positions.length > 0 ? Math.min(...positions) : Number.MAX_SAFE_INTEGER;
  };
  // "Acme Travel" named: "Acme" is part of it, not a second brand (unless its address is given).
  const names = rows.map((row) => row.name.toLowerCase());
  const kept = rows.filter(
    (row) =>
      addresses.includes(row.address) ||
      !names.some((other) => other !== row.name.toLowerCase() && other.includes(row.name.toLowerCase())),
  );
  return kept
    .sort((a, b) => at(a) - at(b))
    .map((row) => ({ brandId: row.address, name: row.name, domain: row.website_domain }));
}

const converseReadFunctions = { findMentionedBrands };

/** What converse reads itself (the brands a question names), bound to the handle by compose.ts. */
export type ConverseReads = BoundToDatabase<typeof converseReadFunctions>;

export function createConverseReads(db: Database): ConverseReads {
  return bindDatabase(db, converseReadFunctions);
}
