import { PORTAL_ROLES, type PortalRole, type PortalTeam } from '@pts/shared/schemas/portal';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, fieldErrors } from '../api.ts';
import { isOwner, useBrand, useSession } from '../session.ts';
import { TableWrap } from '../TableWrap.tsx';

export function TeamPage() {
  const { brandId, membership } = useBrand();
  const session = useSession();
  const queryClient = useQueryClient();
  const owner = isOwner(membership);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<PortalRole>('viewer');
  const team = useQuery({
    queryKey: ['team', brandId],
    queryFn: () => api<PortalTeam>('GET', `/brands/${brandId}/team`),
  });
  const invite = useMutation({
    mutationFn: () => api<{ email: string; inviteUrl?: string }>('POST', `/brands/${brandId}/invites`, { email, role }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['team', brandId] }),
  });
  const changeRole = useMutation({
    mutationFn: (input: { userId: string; role: PortalRole }) =>
      api('PATCH', `/brands/${brandId}/members/${input.userId}`, { role: input.role }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['team', brandId] }),
  });
  const errors = fieldErrors(invite.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate();
  };

  if (team.isPending) return <p className="loading">Loading the team…</p>;
  if (team.isError) return <p role="alert">{team.error.message}</p>;
  return (
    <section>
      <h1>Team</h1>
      <p>Owners do everything, admins everything but the team, viewers read only.</p>
      {changeRole.isError ? (
        <p role="alert" className="error">
          {changeRole.error.message}
        </p>
      ) : null}
      <TableWrap label="Members">
        <table>
          <caption className="visually-hidden">Members</caption>
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">Since</th>
            </tr>
          </thead>
          <tbody>
            {team.data.members.map((member) => (
              <tr key={member.userId}>
                <th scope="row">{member.email}</th>
                <td>
                  {owner && member.userId !== session.data?.user?.id ? (
                    <select
                      aria-label={`Role of ${member.email}`}
                      value={member.role}
                      onChange={(e) => changeRole.mutate({ userId: member.userId, role: e.target.value as PortalRole })}
                    >
                      {PORTAL_ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  ) : (
                    member.role
                  )}
                </td>
                <td>{new Date(member.since).toLocaleDateString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {team.data.pendingInvites.length > 0 ? (
        <>
          <h2>Pending invites</h2>
          <ul>
            {team.data.pendingInvites.map((pending) => (
              <li key={`${pending.email}-${pending.expiresAt}`}>
                {pending.email} as {pending.role}, until {new Date(pending.expiresAt).toLocaleString()}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {owner ? (
        <form onSubmit={submit} className="stack narrow" aria-label="Invite a teammate">
          <h2>Invite a teammate</h2>
          <label>
            E-mail
            <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          {errors.email ? <p className="error">{errors.email}</p> : null}
          <label>
            Role
            <select value={role} onChange={(e) => setRole(e.target.value as PortalRole)}>
              {PORTAL_ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </label>
          {invite.isError && !errors.email ? (
            <p role="alert" className="error">
              {invite.error.message}
            </p>
          ) : null}
          {invite.isSuccess ? (
            <div role="status">
              <p>Invited {invite.data.email}. The link works once, for 72 hours.</p>
              {invite.data.inviteUrl ? (
                <p>
                  No mail server is set up: pass this link on yourself:{' '}
                  <code className="link" data-testid="invite-url">
                    {invite.data.inviteUrl}
                  </code>
                </p>
              ) : null}
            </div>
          ) : null}
          <button type="submit" disabled={invite.isPending}>
            Send invite
          </button>
        </form>
      ) : null}
    </section>
  );
}
