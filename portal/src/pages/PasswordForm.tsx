import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { api, linkToken, loadSession } from '../api.ts';
import { describeError, fieldErrors } from '../errors/describe.ts';
import { refreshSession } from '../session.ts';

/**
 * Sets a password with the link's token (invite or reset), then lands in the portal signed in. `onRefused` hears
 * a refusal first (the invite page turns "this e-mail already has an account" into its sign-in step).
 */
export function PasswordForm({
  path,
  button,
  onRefused,
}: {
  path: string;
  button: string;
  onRefused?: (error: Error) => void;
}) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [mismatch, setMismatch] = useState(false);
  const setIt = useMutation({
    mutationFn: async () => {
      await loadSession();
      await api('POST', path, { token: linkToken(), password });
    },
    onSuccess: async () => {
      window.history.replaceState(null, '', window.location.pathname);
      await refreshSession(queryClient);
      navigate('/');
    },
    onError: (error) => onRefused?.(error),
  });
  const errors = fieldErrors(setIt.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setMismatch(password !== confirm);
    if (password === confirm) setIt.mutate();
  };
  return (
    <form onSubmit={submit} className="stack">
      <label>
        New password (at least 10 characters)
        <input
          type="password"
          autoComplete="new-password"
          required
          minLength={10}
          value={password}
          aria-invalid={errors.password ? true : undefined}
          aria-describedby={errors.password ? 'password-error' : undefined}
          onChange={(e) => setPassword(e.target.value)}
        />
      </label>
      {errors.password ? (
        <p id="password-error" className="error">
          {errors.password}
        </p>
      ) : null}
      <label>
        Repeat the password
        <input
          type="password"
          autoComplete="new-password"
          required
          value={confirm}
          onChange={(e) => setConfirm(e.target.value)}
        />
      </label>
      {mismatch ? (
        <p className="error" role="alert">
          The two passwords differ.
        </p>
      ) : null}
      {setIt.isError && !errors.password ? (
        <p role="alert" className="error">
          {describeError(setIt.error).message}
        </p>
      ) : null}
      <button type="submit" disabled={setIt.isPending}>
        {button}
      </button>
    </form>
  );
}
