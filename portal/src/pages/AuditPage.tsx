import { AUDIT_ACTOR_KINDS } from '@pts/shared/schemas/audit';
import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ErrorNote } from '../errors/ErrorNote.tsx';
import { auditQuery } from '../queries/team.ts';
import { useBrand } from '../session.ts';
import { TableWrap } from '../TableWrap.tsx';

const KIND_LABELS: Record<(typeof AUDIT_ACTOR_KINDS)[number], string> = {
  portal: 'Portal user',
  operator: 'Platform operator (portal)',
  admin: 'CLI / admin token',
  agent: 'Agent key',
  brand: 'Brand key (signed API)',
  system: 'Platform',
};

/** The brand's audit log (docs/portal.md, "Audit log"): who changed what and when, filterable. */
export function AuditPage() {
  const { brandId } = useBrand();
  const [draft, setDraft] = useState({ actorKind: '', actor: '', action: '' });
  const [filter, setFilter] = useState(draft);
  const query = new URLSearchParams(Object.entries(filter).filter(([, value]) => value !== '')).toString();
  const audit = useQuery(auditQuery(brandId, query));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setFilter(draft);
  };
  return (
    <section>
      <h1>Audit log</h1>
      <form className="row filters" onSubmit={submit} aria-label="Filter the audit log">
        <label>
          Who
          <select value={draft.actorKind} onChange={(e) => setDraft({ ...draft, actorKind: e.target.value })}>
            <option value="">Anyone</option>
            {AUDIT_ACTOR_KINDS.map((kind) => (
              <option key={kind} value={kind}>
                {KIND_LABELS[kind]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Actor contains
          <input value={draft.actor} onChange={(e) => setDraft({ ...draft, actor: e.target.value })} />
        </label>
        <label>
          Action starts with
          <input value={draft.action} onChange={(e) => setDraft({ ...draft, action: e.target.value })} />
        </label>
        <button type="submit">Filter</button>
      </form>
      {audit.isPending ? <p className="loading">Loading the audit log…</p> : null}
      <ErrorNote error={audit.error} onRetry={() => void audit.refetch()} />
      {audit.data ? (
        <TableWrap label="Changes, newest first">
          <table>
            <caption className="visually-hidden">Changes, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">What</th>
                <th scope="col">Changes</th>
              </tr>
            </thead>
            <tbody>
              {audit.data.entries.length === 0 ? (
                <tr>
                  <td colSpan={4}>No change matches.</td>
                </tr>
              ) : (
                audit.data.entries.map((entry) => (
                  <tr key={entry.id}>
                    <th scope="row">{new Date(entry.at).toLocaleString()}</th>
                    <td>
                      {entry.actor} <span className="role">{KIND_LABELS[entry.actorKind]}</span>
                    </td>
                    <td>
                      {entry.action}
                      {entry.subject ? <span className="note"> {entry.subject}</span> : null}
                    </td>
                    <td>
                      <code className="link">{JSON.stringify(entry.details)}</code>
                    </td>
                  </tr>
                ))
              )}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
    </section>
  );
}
