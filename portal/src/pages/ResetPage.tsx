import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { api, linkToken, loadSession } from '../api.ts';
import { describeError } from '../errors/describe.ts';
import { AuthFrame } from './AuthFrame.tsx';
import { PasswordForm } from './PasswordForm.tsx';

/** With a link's token: set a new password. Without: ask for a link (the answer never says if the e-mail exists). */
export function ResetPage() {
  const [email, setEmail] = useState('');
  const ask = useMutation({
    mutationFn: async () => {
      await loadSession();
      await api('POST', '/password-reset', { email });
    },
  });
  if (linkToken()) {
    return (
      <AuthFrame title="Choose a new password">
        <PasswordForm path="/password-reset/complete" button="Set password and sign in" />
      </AuthFrame>
    );
  }
  const submit = (event: FormEvent) => {
    event.preventDefault();
    ask.mutate();
  };
  return (
    <AuthFrame title="Reset your password">
      {ask.isSuccess ? (
        <p role="status">
          If {email} has an account, a reset link is on its way. It works once, for one hour; a newer link replaces it.
        </p>
      ) : (
        <form onSubmit={submit} className="stack">
          <label>
            E-mail
            <input
              type="email"
              autoComplete="username"
              required
              value={email}
              onChange={(e) => setEmail(e.target.value)}
            />
          </label>
          {ask.isError ? (
            <p role="alert" className="error">
              {describeError(ask.error).message}
            </p>
          ) : null}
          <button type="submit" disabled={ask.isPending}>
            Send a reset link
          </button>
        </form>
      )}
      <p>
        <Link to="/sign-in">Back to sign in</Link>
      </p>
    </AuthFrame>
  );
}
