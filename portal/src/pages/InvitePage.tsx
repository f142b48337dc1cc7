import { AuthFrame } from './AuthFrame.tsx';
import { PasswordForm } from './PasswordForm.tsx';

export function InvitePage() {
  return (
    <AuthFrame title="Welcome: choose your password">
      <p>You were invited to a brand on pts. Choose a password to sign in.</p>
      <PasswordForm path="/invites/accept" button="Set password and sign in" />
    </AuthFrame>
  );
}
