import { PORTAL_ROLES, type PortalRole, type PortalTeam } from '@pts/shared/schemas/portal';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { api, request } from '../api.ts';
import { ErrorNote } from '../errors/ErrorNote.tsx';
import { sessionQuery } from '../queries/session.ts';
import { teamInviteSentAnswerSchema, teamQuery } from '../queries/team.ts';
import { isOwner, useBrand, useSession } from '../session.ts';
import { ListAndForm } from '../ui/ListAndForm.tsx';
import { InputField, useFieldErrors } from './program/fields.tsx';

type TeamMember = PortalTeam['members'][number];

/** The brand's team: its members and their roles, pending invites, a new invite, and leaving the brand. */
export function TeamPage() {
  const { brandId, membership } = useBrand();
  const session = useSession();
  const queryClient = useQueryClient();
  const owner = isOwner(membership);
  const team = useQuery(teamQuery(brandId));
  const invite = useMutation({
    mutationFn: (input: { email: string; role: PortalRole }) =>
      request(teamInviteSentAnswerSchema, 'POST', `/brands/${brandId}/invites`, input),
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

  // The page's heading comes with its list (the journeys read the team as soon as they see "Team").
  if (team.isPending) return <p className="loading">Loading the team…</p>;
  return (
    <ListAndForm<TeamMember>
      level={1}
      headingId="team-heading"
      heading="Team"
      intro={<p>Owners do everything, admins everything but the team, viewers read only.</p>}
      problems={[changeRole.error, teamChange.error]}
      before={done && !teamChange.isError ? <p role="status">{done}</p> : null}
      items={team.data?.members}
      pending={false}
      error={team.error}
      onRetry={() => void team.refetch()}
      loadingText="Loading the team…"
      emptyText="No member yet."
      tableLabel="Members"
      itemKey={(member) => member.userId}
      head={
        <tr>
          <th scope="col">E-mail</th>
          <th scope="col">Role</th>
          <th scope="col">Since</th>
          {owner ? <th scope="col">Access</th> : null}
        </tr>
      }
      row={(member) => (
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
      )}
      after={
        team.data ? (
          <>
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
              <InviteForm
                saving={invite.isPending}
                error={invite.error}
                sent={invite.data}
                onSave={(input) => invite.mutate(input)}
              />
            ) : null}
            <h2>Leave this brand</h2>
            <p>You lose access at once; an owner can invite you again. The last owner cannot leave.</p>
            <ErrorNote error={leave.error} className="error" />
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
          </>
        ) : null
      }
    />
  );
}

/**
 * An invite into the team: the e-mail and role (the server's refusal of the e-mail shows under it), and once
 * sent, the link to pass on when no mail server is set up.
 */
export function InviteForm(props: {
  saving: boolean;
  error: Error | null;
  sent: { email: string; inviteUrl?: string | null | undefined } | undefined;
  onSave(input: { email: string; role: PortalRole }): void;
}) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<PortalRole>('viewer');
  const { field, general } = useFieldErrors(props.error, 'invite');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onSave({ email, role });
  };
  return (
    <form onSubmit={submit} className="stack narrow" aria-label="Invite a teammate">
      <h2>Invite a teammate</h2>
      <InputField
        label="E-mail"
        name="email"
        type="email"
        required
        value={email}
        onChange={(e) => setEmail(e.target.value)}
        field={field('email')}
      />
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
      {general}
      {props.sent ? (
        <div role="status">
          <p>Invited {props.sent.email}. The link works once, for 72 hours.</p>
          {props.sent.inviteUrl ? (
            <p>
              No mail server is set up: pass this link on yourself:{' '}
              <code className="link" data-testid="invite-url">
                {props.sent.inviteUrl}
              </code>
            </p>
          ) : null}
        </div>
      ) : null}
      <button type="submit" disabled={props.saving}>
        Send invite
      </button>
    </form>
  );
}
