import type { Database } from '../../db/database.ts';

/** The longest display name kept, in characters (code points); longer names are cut. */
export const DISPLAY_NAME_MAX_LENGTH = 64;

/**
 * A display name as shown on leaderboards, from what a client sent in `metadata.displayName`: whitespace runs
 * become one space; control, format (bidirectional overrides, zero-width characters), private-use and
 * surrogate characters and `<` `>` are removed; trimmed and cut to 64 characters. Anything that is not a
 * string, or nothing left after cleaning, gives undefined (the event itself is never refused for it).
 */
export function sanitizeDisplayName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const cleaned = value
    .normalize('NFC')
    .replace(/\s+/gu, ' ')
    .replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cs}<>]/gu, '')
    .trim();
  if (!cleaned) return undefined;
  const chars = Array.from(cleaned);
  return chars.length > DISPLAY_NAME_MAX_LENGTH ? chars.slice(0, DISPLAY_NAME_MAX_LENGTH).join('').trim() : cleaned;
}

/** The display name a request's metadata carries, if any (`metadata.displayName`). */
export function displayNameOf(metadata: Record<string, unknown> | null | undefined): string | undefined {
  return sanitizeDisplayName(metadata?.displayName);
}

export interface DisplayNameInput {
  brandId: string;
  /** The account key the boards rank (a linked identity's account). */
  accountKey: string;
  displayName: string;
}

/**
 * Stores the latest display name per brand and user (in the caller's transaction when given one). Rows are
 * written in a fixed order and only when the name changed, so concurrent writers never deadlock and a bot
 * sending the same name with every event writes nothing.
 */
export async function saveDisplayNames(db: Database, names: DisplayNameInput[], at: Date): Promise<void> {
  const latest = new Map<string, DisplayNameInput>();
  for (const name of names) latest.set(`${name.brandId}\u0000${name.accountKey}`, name);
  if (latest.size === 0) return;
  const rows = [...latest.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, n]) => ({ brand_id: n.brandId, user_key: n.accountKey, display_name: n.displayName, updated_at: at }));
  await db
    .insertInto('user_display_names')
    .values(rows)
    .onConflict((oc) =>
      oc
        .columns(['brand_id', 'user_key'])
        .doUpdateSet((eb) => ({
          display_name: eb.ref('excluded.display_name'),
          updated_at: eb.ref('excluded.updated_at'),
        }))
        .where((eb) => eb('user_display_names.display_name', 'is distinct from', eb.ref('excluded.display_name'))),
    )
    .execute();
}

/** The stored display names of these users with this brand. */
export async function findDisplayNames(
  db: Database,
  brandId: string,
  userKeys: string[],
): Promise<Map<string, string>> {
  const keys = [...new Set(userKeys)];
  if (keys.length === 0) return new Map();
  const rows = await db
    .selectFrom('user_display_names')
    .select(['user_key', 'display_name'])
    .where('brand_id', '=', brandId)
    .where('user_key', 'in', keys)
    .execute();
  return new Map(rows.map((row) => [row.user_key, row.display_name]));
}
