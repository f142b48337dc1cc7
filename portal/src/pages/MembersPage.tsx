import type { MemberMatch } from '@pts/shared/schemas/brand-members';
import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api } from '../api.ts';
import { useBrand } from '../session.ts';
import { TableWrap } from '../TableWrap.tsx';

/** Find a member by e-mail, platform identity or wallet. The search is in the URL, so it survives a reload. */
export function MembersPage() {
  const { brandId } = useBrand();
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const [text, setText] = useState(q);
  const search = useQuery({
    queryKey: ['member-search', brandId, q],
    queryFn: () =>
      api<{ members: MemberMatch[] }>('GET', `/brands/${brandId}/loyalty-members?q=${encodeURIComponent(q)}`),
    enabled: q.length > 0,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setParams({ q: text.trim() });
  };
  return (
    <section>
      <h1>Members</h1>
      <p>The people your program has seen: an event (earned or refused) or a redemption.</p>
      <form className="row search" aria-label="Find a member" onSubmit={submit}>
        <label>
          E-mail, platform id (discord:123) or wallet
          <input name="q" type="search" required minLength={2} value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <button type="submit">Search</button>
      </form>
      {search.isError ? (
        <p role="alert" className="error">
          {search.error.message}
        </p>
      ) : null}
      {search.isFetching ? <p className="loading">Searching…</p> : null}
      {search.data ? (
        search.data.members.length === 0 ? (
          <p role="status">No member matches “{q}”.</p>
        ) : (
          <TableWrap label="Members found">
            <table>
              <caption className="visually-hidden">Members found</caption>
              <thead>
                <tr>
                  <th scope="col">Member</th>
                  <th scope="col">Identity</th>
                  <th scope="col">Wallet</th>
                  <th scope="col">Last seen</th>
                </tr>
              </thead>
              <tbody>
                {search.data.members.map((member) => (
                  <tr key={member.userKey}>
                    <th scope="row">
                      <Link to={`/brands/${brandId}/members/${encodeURIComponent(member.userKey)}`}>
                        {member.userKey}
                      </Link>
                    </th>
                    <td>{member.platform}</td>
                    <td>
                      <code className="link">{member.walletAddress ?? 'none yet'}</code>
                    </td>
                    <td>{member.lastSeenAt ? new Date(member.lastSeenAt).toLocaleString() : ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )
      ) : null}
    </section>
  );
}
