import type { MemberListSort } from '@pts/shared/schemas/brand-members';
import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { describeError } from '../errors/describe.ts';
import { memberListQuery } from '../queries/members.ts';
import { canEdit, useBrand } from '../session.ts';
import { TableWrap } from '../TableWrap.tsx';

const SORTS: { value: MemberListSort; label: string }[] = [
  { value: 'lastActivity', label: 'Last activity' },
  { value: 'joined', label: 'Join date' },
  { value: 'balance', label: 'Balance' },
  { value: 'earned', label: 'Earned' },
];
const PAGE_SIZE = 25;
const number = new Intl.NumberFormat('en-US');

/**
 * The brand's members, sorted by balance, earned, last activity or join date, a page at a time, with a search
 * that finds the text anywhere in an e-mail, identity or wallet. Sort, order and search are in the URL (a reload
 * or a shared link shows the same list); admins and owners export it, and a period's events, as CSV.
 */
export function MembersPage() {
  const { brandId, membership } = useBrand();
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const sort = (SORTS.find((s) => s.value === params.get('sort'))?.value ?? 'lastActivity') as MemberListSort;
  const order = params.get('order') === 'asc' ? 'asc' : 'desc';
  const [text, setText] = useState(q);
  // The cursors of the pages before this one: "Previous" pops, "Next" pushes.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const filter = new URLSearchParams({ sort, order, ...(q ? { q } : {}) });
  const page = useQuery(memberListQuery(brandId, { sort, order, q, cursor, limit: PAGE_SIZE }));
  const show = (next: Record<string, string>) => {
    setCursors([]);
    const merged = { sort, order, ...(q ? { q } : {}), ...next };
    setParams(Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== '')));
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    show({ q: text.trim() });
  };
  const pageNumber = cursors.length + 1;
  return (
    <section>
      <h1>Members</h1>
      <p>The people your program has seen: an event (earned or refused) or a redemption.</p>
      <form className="row search" aria-label="Find a member" onSubmit={submit}>
        <label>
          E-mail, platform id (discord:123) or wallet
          <input name="q" type="search" minLength={2} value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <button type="submit">Search</button>
      </form>
      <div className="row">
        <label>
          Sort by
          <select value={sort} onChange={(e) => show({ sort: e.target.value })}>
            {SORTS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Order
          <select value={order} onChange={(e) => show({ order: e.target.value })}>
            <option value="desc">Highest or latest first</option>
            <option value="asc">Lowest or earliest first</option>
          </select>
        </label>
        {canEdit(membership) ? (
          <a className="button" href={`/portal/api/brands/${brandId}/member-list.csv?${filter}`} download>
            Export these members (CSV)
          </a>
        ) : null}
      </div>
      {page.isError ? (
        <p role="alert" className="error">
          {describeError(page.error).message}
        </p>
      ) : null}
      {page.isFetching ? <p className="loading">Loading…</p> : null}
      {page.data ? (
        page.data.members.length === 0 ? (
          <p role="status">{q ? `No member matches “${q}”.` : 'No member yet.'}</p>
        ) : (
          <TableWrap label="Members">
            <table>
              <caption className="visually-hidden">
                Members, page {pageNumber}, by {SORTS.find((s) => s.value === sort)?.label.toLowerCase()}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Member</th>
                  <th scope="col">Balance</th>
                  <th scope="col">Earned</th>
                  <th scope="col">Last activity</th>
                  <th scope="col">Joined</th>
                  <th scope="col">Wallet</th>
                </tr>
              </thead>
              <tbody>
                {page.data.members.map((member) => (
                  <tr key={member.accountKey}>
                    <th scope="row">
                      <Link to={`/brands/${brandId}/members/${encodeURIComponent(member.accountKey)}`}>
                        {member.accountKey}
                      </Link>
                      {member.identityKeys.length > 1 ? (
                        <span className="role"> +{member.identityKeys.length - 1} linked</span>
                      ) : null}
                    </th>
                    <td>{number.format(member.balance)} pts</td>
                    <td>{number.format(member.earned)} pts</td>
                    <td>{new Date(member.lastActivityAt).toLocaleString()}</td>
                    <td>{new Date(member.joinedAt).toLocaleDateString()}</td>
                    <td>
                      <code className="link">{member.walletAddress ?? 'none yet'}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )
      ) : null}
      <nav className="row" aria-label="Pages">
        <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <span>Page {pageNumber}</span>
        <button
          type="button"
          disabled={!page.data?.nextCursor || page.isPlaceholderData}
          onClick={() => page.data?.nextCursor && setCursors([...cursors, page.data.nextCursor])}
        >
          Next page
        </button>
      </nav>
      {canEdit(membership) ? <EventExport brandId={brandId} /> : null}
    </section>
  );
}

/** A period's events as CSV: the download is a plain link, so the browser streams it to disk. */
function EventExport({ brandId }: { brandId: string }) {
  const today = new Date().toISOString().slice(0, 10);
  const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
  const [from, setFrom] = useState(monthAgo);
  const [to, setTo] = useState(today);
  const valid = from !== '' && to !== '' && from <= to;
  // `to` is a whole day: the export runs to the start of the next one.
  const end = valid ? new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString() : '';
  const href = `/portal/api/brands/${brandId}/events.csv?from=${from}T00:00:00Z&to=${end}`;
  return (
    <section aria-labelledby="event-export">
      <h2 id="event-export">Export events</h2>
      <div className="row">
        <label>
          From (UTC)
          <input type="date" value={from} onChange={(e) => setFrom(e.target.value)} />
        </label>
        <label>
          To (UTC, included)
          <input type="date" value={to} onChange={(e) => setTo(e.target.value)} />
        </label>
        {valid ? (
          <a className="button" href={href} download>
            Export events (CSV)
          </a>
        ) : (
          <p role="alert">Pick a start on or before the end.</p>
        )}
      </div>
    </section>
  );
}
