import type { AuditActorKind, AuditEntry, AuditPage, AuditQuery } from '@pts/shared';
import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';

/** The kind of an audit actor text (`auditEntrySchema`): who made a change. */
export function actorKindOf(actor: string): AuditActorKind {
  if (actor.startsWith('portal:')) return 'portal';
  if (actor.startsWith('operator:')) return 'operator';
  if (actor.startsWith('agent:')) return 'agent';
  if (actor === 'admin') return 'admin';
  if (actor === 'brand-key') return 'brand';
  return 'system';
}

/** `LIKE` pattern text matching `value` literally. */
const literal = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * A brand's audit log (docs/portal.md, "Audit log"), newest first, filtered by actor kind, actor text, action
 * (prefix) and time; pages by `before` (an entry id). One index range scan on `audit_log_brand_idx`.
 */
export async function listAuditEntries(db: Database, brandId: string, query: AuditQuery): Promise<AuditPage> {
  let select = db
    .selectFrom('audit_log')
    .select(['id', 'actor', 'action', 'subject', 'details', 'created_at'])
    .where('brand_id', '=', brandId.toLowerCase());
  if (query.actorKind === 'portal') select = select.where('actor', 'like', 'portal:%');
  if (query.actorKind === 'operator') select = select.where('actor', 'like', 'operator:%');
  if (query.actorKind === 'agent') select = select.where('actor', 'like', 'agent:%');
  if (query.actorKind === 'admin') select = select.where('actor', '=', 'admin');
  if (query.actorKind === 'brand') select = select.where('actor', '=', 'brand-key');
  if (query.actorKind === 'system') {
    select = select
      .where('actor', 'not like', 'portal:%')
      .where('actor', 'not like', 'agent:%')
      .where('actor', 'not like', 'operator:%')
      .where('actor', 'not in', ['admin', 'brand-key']);
  }
  if (query.actor) select = select.where(sql<boolean>`actor ILIKE ${`%${literal(query.actor)}%`}`);
  if (query.action) select = select.where('action', 'like', `${literal(query.action)}%`);
  if (query.from) select = select.where('created_at', '>=', query.from);
  if (query.to) select = select.where('created_at', '<', query.to);
  if (query.before) select = select.where('id', '<', BigInt(query.before));
  const rows = await select
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
  const page = rows.slice(0, query.limit);
  const entries: AuditEntry[] = page.map((row) => ({
    id: String(row.id),
    actor: row.actor,
    actorKind: actorKindOf(row.actor),
    action: row.action,
    subject: row.subject,
    details: row.details,
    at: row.created_at.toISOString(),
  }));
  return {
    success: true,
    entries,
    nextBefore: rows.length > query.limit ? String(page[page.length - 1]!.id) : null,
  };
}
