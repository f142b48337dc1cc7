import { PORTAL_ROLES, type PortalRole } from '@pts/shared/schemas/portal';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { api, request } from '../api.ts';
import { describeError, fieldErrors } from '../errors/describe.ts';
import { ErrorNote } from '../errors/ErrorNote.tsx';
import { sessionQuery } from '../queries/session.ts';
import { teamInviteSentAnswerSchema, teamQuery } from '../queries/team.ts';
import { isOwner, useBrand, useSession } from '../session.ts';
import { TableWrap } from '../TableWrap.tsx';

export function TeamPage() {
  const { brandId, membership } = useBrand();
  const session = useSession();
  const queryClient = useQueryClient();
  const owner = isOwner(membership);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<PortalRole>('viewer');
  const team = useQuery(teamQuery(brandId));
  const invite = useMutation({
    mutationFn: () => request(teamInviteSentAnswerSchema, 'POST', `/brands/${brandId}/invites`, { email, role }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: teamQuery(brandId).queryKey }),
  });
  const changeRole = useMutation({
    mutationFn: (input: { userId: string; role: PortalRole }) =>
      api('PATCH', `/brands/${brandId}/members/${input.userId}`, { role: input.role }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: teamQuery(brandId).queryKey }),
  });
  // Removing, revoking, ending sessions and leaving: each asks first, then says what it did.
  const [done, setDone] = useState('');
  type TeamChange = { method: string; path: string; done: string; revokes?: string };
  const teamChange = useMutation({
    mutationFn: (change: TeamChange) => api(change.method, change.path).then(() => change.done),
    onSuccess: (message, change) => {
      setDone(message);
      // A revoked invite's link, shown above to pass on, no longer works: it is not offered any more.
      if (change.revokes && invite.data?.email === change.revokes) invite.reset();
      return queryClient.invalidateQueries({ queryKey: teamQuery(brandId).queryKey });
    },
  });
  const act = (question: string, change: TeamChange) => {
    if (window.confirm(question)) teamChange.mutate(change);
  };
  const navigate = useNavigate();
  const leave = useMutation({
    mutationFn: () => api('POST', `/brands/${brandId}/leave`),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: sessionQuery().queryKey });
      navigate('/');
    },
  });
  const errors = fieldErrors(invite.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate();
  };

  if (team.isPending) return <p className="loading">Loading the team…</p>;
  if (team.isError) return <ErrorNote error={team.error} />;
  return (
    <section>
      <h1>Team</h1>
      <p>Owners do everything, admins everything but the team, viewers read only.</p>
      {changeRole.isError ? (
        <p role="alert" className="error">
          {describeError(changeRole.error).message}
        </p>
      ) : null}
      {teamChange.isError ? (
        <p role="alert" className="error">
          {describeError(teamChange.error).message}
        </p>
      ) : null}
      {done && !teamChange.isError ? <p role="status">{done}</p> : null}
      <TableWrap label="Members">
        <table>
          <caption className="visually-hidden">Members</caption>
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">Since</th>
              {owner ? <th scope="col">Access</th> : null}
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
                {owner ? (
                  <td>
                    {member.userId !== session.data?.user?.id ? (
                      <span className="actions">
                        <button
                          type="button"
                          className="secondary"
                          aria-label={`End sessions of ${member.email}`}
                          disabled={teamChange.isPending}
                          onClick={() =>
                            act(`Sign ${member.email} out everywhere? They can sign in again.`, {
                              method: 'POST',
                              path: `/brands/${brandId}/members/${member.userId}/sessions/end`,
                              done: `${member.email} is signed out everywhere.`,
                            })
                          }
                        >
                          End sessions
                        </button>{' '}
                        <button
                          type="button"
                          className="danger"
                          aria-label={`Remove ${member.email}`}
                          disabled={teamChange.isPending}
                          onClick={() =>
                            act(`Remove ${member.email} from the team? Their access ends at once.`, {
                              method: 'DELETE',
                              path: `/brands/${brandId}/members/${member.userId}`,
                              done: `${member.email} was removed from the team; their pending invites are void.`,
                            })
                          }
                        >
                          Remove
                        </button>
                      </span>
                    ) : (
                      'you'
                    )}
                  </td>
                ) : null}
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
                {pending.email} as {pending.role}, until {new Date(pending.expiresAt).toLocaleString()}{' '}
                {owner ? (
                  <button
                    type="button"
                    className="secondary"
                    aria-label={`Revoke the invite to ${pending.email}`}
                    disabled={teamChange.isPending}
                    onClick={() =>
                      act(`Revoke the invite to ${pending.email}? The link stops working.`, {
                        method: 'DELETE',
                        path: `/brands/${brandId}/invites/${encodeURIComponent(pending.email)}`,
                        done: `The invite to ${pending.email} was revoked.`,
                        revokes: pending.email,
                      })
                    }
                  >
                    Revoke
                  </button>
                ) : null}
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
              {describeError(invite.error).message}
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
      <h2>Leave this brand</h2>
      <p>You lose access at once; an owner can invite you again. The last owner cannot leave.</p>
      {leave.isError ? (
        <p role="alert" className="error">
          {describeError(leave.error).message}
        </p>
      ) : null}
      <button
        type="button"
        className="danger"
        disabled={leave.isPending}
        onClick={() => {
          if (window.confirm('Leave this brand? You lose access at once.')) leave.mutate();
        }}
      >
        Leave brand
      </button>
    </section>
  );
}
