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

/**
 * The events with `user_email` resolved to the member's ACCOUNT (account_links.account_key, or the identity
 * itself when unlinked), every other column as stored: every count of members reads events through it
 * (`FROM ${accountEvents} AS events`), so a person whose identities are linked counts once, as the brand
 * rollups count them (migration 2026_12_07_z01_rollup_accounts).
 */
export const accountEvents: RawBuilder<unknown> = sql`(
  SELECT e.id, e.brand_id, e.event_type, coalesce(l.account_key, e.user_email) AS user_email, e.status, e.reason,
         e.source, e.domain, e.channel_id, e.metadata, e.reward_amount, e.created_at, e.sent_by, e.value_minor,
         e.value_currency
    FROM events e LEFT JOIN account_links l ON l.identity_key = e.user_email)`;
