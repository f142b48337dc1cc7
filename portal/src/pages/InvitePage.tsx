import { portalJoinedSchema } from '@pts/shared/schemas/portal';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { ApiError, api, linkToken, loadSession, request } from '../api.ts';
import { describeError } from '../errors/describe.ts';
import { refreshSession, useSession } from '../session.ts';
import { AuthFrame } from './AuthFrame.tsx';
import { PasswordForm } from './PasswordForm.tsx';

// An invite link (docs/portal.md, "Invites and resets: who can do what"). A new person chooses a password with
// it. A person who already has an account proves who they are first, with their own password, then accepts:
// the link alone never changes an existing account (the inviter may hold it too).

export function InvitePage() {
  const session = useSession();
  const [step, setStep] = useState<'new' | 'existing'>('new');
  const [notice, setNotice] = useState('');
  if (session.isPending) {
    return (
      <AuthFrame title="Your invite">
        <p>Loading…</p>
      </AuthFrame>
    );
  }
  if (session.data?.signedIn && session.data.user) return <AcceptAsSignedIn email={session.data.user.email} />;
  if (step === 'existing') {
    return (
      <AuthFrame title="Sign in to accept your invite">
        <p>{notice || 'Sign in with your pts account; then accept the invite.'}</p>
        <SignInToAccept />
        <p>
          <button type="button" className="secondary" onClick={() => setStep('new')}>
            I am new to pts: choose a password instead
          </button>
        </p>
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title="Welcome: choose your password">
      <p>You were invited to a brand on pts. Choose a password to sign in.</p>
      <PasswordForm
        path="/invites/accept"
        button="Set password and sign in"
        onRefused={(error) => {
          if (error instanceof ApiError && error.status === 409) {
            setNotice('This e-mail already has a pts account: sign in with its password, then accept the invite.');
            setStep('existing');
          }
        }}
      />
      <p>
        <button type="button" className="secondary" onClick={() => setStep('existing')}>
          I already have a pts account
        </button>
      </p>
    </AuthFrame>
  );
}

/** Signs in on the invite page itself, so the link (in the fragment) stays in the address bar for the accept. */
function SignInToAccept() {
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useMutation({
    mutationFn: async () => {
      await loadSession();
      await api('POST', '/sign-in', { email, password });
    },
    onSuccess: () => refreshSession(queryClient),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate();
  };
  return (
    <form onSubmit={submit} className="stack">
      <label>
        E-mail
        <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
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
  );
}

/** The signed-in person accepts the invite sent to their e-mail; they land on the brand they joined. */
function AcceptAsSignedIn({ email }: { email: string }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const accept = useMutation({
    mutationFn: async () => {
      await loadSession();
      return request(portalJoinedSchema, 'POST', '/invites/join', { token: linkToken() });
    },
    onSuccess: async (joined) => {
      window.history.replaceState(null, '', window.location.pathname);
      await refreshSession(queryClient);
      navigate(joined.brandId ? `/brands/${joined.brandId}/dashboard` : '/operator');
    },
  });
  const signOut = useMutation({
    mutationFn: () => api('POST', '/sign-out'),
    onSuccess: () => refreshSession(queryClient),
  });
  return (
    <AuthFrame title="Accept your invite">
      <p>
        You are signed in as <strong>{email}</strong>. Accepting adds the brand to your account; your password stays as
        it is.
      </p>
      {accept.isError ? (
        <p role="alert" className="error">
          {describeError(accept.error).message}
        </p>
      ) : null}
      <div className="actions">
        <button type="button" onClick={() => accept.mutate()} disabled={accept.isPending}>
          Accept the invite
        </button>
        <button type="button" className="secondary" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          Not {email}? Sign out
        </button>
      </div>
    </AuthFrame>
  );
}
