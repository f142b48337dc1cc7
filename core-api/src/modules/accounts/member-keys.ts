import { AGENT_IDENTITY_PREFIXES } from '@pts/shared';
import { type RawBuilder, sql } from 'kysely';

// `agent_` escaped for LIKE (`_` matches any one character otherwise); the prefixes are shared/src/member.ts's.
const AGENT_PATTERNS = AGENT_IDENTITY_PREFIXES.map((prefix) => `${prefix.replaceAll('_', '\\_')}%`);

/**
 * The one SQL predicate for "this key is a member's, not an agent's" (shared `isAgentKey` in SQL): every count
 * of members, redeemers and earnings filters its identity or account column with it. The brand rollups'
 * triggers (migration 2026_12_05_a01, frozen) hold the same two patterns.
 */
export function isMemberKey(column: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`(${sql.join(
    AGENT_PATTERNS.map((pattern) => sql`${column} NOT LIKE ${sql.lit(pattern)}`),
    sql` AND `,
  )})`;
}
