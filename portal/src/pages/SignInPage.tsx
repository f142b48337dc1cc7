import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { api, loadSession } from '../api.ts';
import { describeError } from '../errors/describe.ts';
import { refreshSession } from '../session.ts';
import { AuthFrame } from './AuthFrame.tsx';

export function SignInPage() {
  const navigate = useNavigate();
  const location = useLocation();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useMutation({
    mutationFn: async () => {
      await loadSession();
      await api('POST', '/sign-in', { email, password });
    },
    onSuccess: async () => {
      await refreshSession(queryClient);
      navigate(returnPath(location.state));
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate();
  };
  return (
    <AuthFrame title="Sign in">
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
        <label>
          Password
          <input
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        {signIn.isError ? (
          <p role="alert" className="error">
            {describeError(signIn.error).message}
          </p>
        ) : null}
        <button type="submit" disabled={signIn.isPending}>
          Sign in
        </button>
      </form>
      <p>
        <Link to="/reset">Forgot your password?</Link>
      </p>
    </AuthFrame>
  );
}

/** Where the frame sent the person from (a page of the portal), or the portal's home. */
function returnPath(state: unknown): string {
  const from = (state as { from?: unknown } | null)?.from;
  return typeof from === 'string' && from.startsWith('/') && !from.startsWith('//') && from !== '/sign-in' ? from : '/';
}
