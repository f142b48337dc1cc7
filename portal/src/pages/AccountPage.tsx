import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api.ts';
import { describeError, fieldErrors } from '../errors/describe.ts';
import { sessionQuery } from '../queries/session.ts';

/** Password change: every other session of the user ends. */
export function AccountPage() {
  const queryClient = useQueryClient();
  const [currentPassword, setCurrent] = useState('');
  const [newPassword, setNew] = useState('');
  const change = useMutation({
    mutationFn: () => api('POST', '/password', { currentPassword, newPassword }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: sessionQuery().queryKey }),
  });
  const errors = fieldErrors(change.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate();
  };
  return (
    <section>
      <h1>Your account</h1>
      <h2>Change your password</h2>
      <p>Every other browser signed in as you is signed out.</p>
      <form onSubmit={submit} className="stack narrow">
        <label>
          Current password
          <input
            type="password"
            autoComplete="current-password"
            required
            value={currentPassword}
            onChange={(e) => setCurrent(e.target.value)}
          />
        </label>
        {errors.currentPassword ? <p className="error">{errors.currentPassword}</p> : null}
        <label>
          New password (at least 10 characters)
          <input
            type="password"
            autoComplete="new-password"
            required
            value={newPassword}
            onChange={(e) => setNew(e.target.value)}
          />
        </label>
        {errors.newPassword ? <p className="error">{errors.newPassword}</p> : null}
        {change.isError && !errors.currentPassword && !errors.newPassword ? (
          <p role="alert" className="error">
            {describeError(change.error).message}
          </p>
        ) : null}
        {change.isSuccess ? <p role="status">Password changed.</p> : null}
        <button type="submit" disabled={change.isPending}>
          Change password
        </button>
      </form>
    </section>
  );
}
