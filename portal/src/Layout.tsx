import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link, NavLink, Outlet, useLocation, useNavigate, useParams } from 'react-router';
import { api } from './api.ts';
import { useMembership, useSession } from './session.ts';

/** The signed-in frame: brand switcher, the pages that work, the account menu. */
export function Layout() {
  const session = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  const queryClient = useQueryClient();
  const { brandId } = useParams();
  const current = useMembership(brandId);
  const signOut = useMutation({
    mutationFn: () => api('POST', '/sign-out'),
    onSuccess: async () => {
      queryClient.clear();
      navigate('/sign-in');
    },
  });

  useEffect(() => {
    if (session.data && !session.data.signedIn)
      navigate('/sign-in', { replace: true, state: { from: location.pathname } });
  }, [session.data, navigate, location.pathname]);

  if (session.isPending) return <p className="loading">Loading…</p>;
  if (session.isError) return <p role="alert">The portal could not reach the server: {session.error.message}</p>;
  if (!session.data.signedIn) return null;

  return (
    <div className="frame">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to="/" className="logo">
          pts portal
        </Link>
        {current ? (
          <nav aria-label="Brand pages">
            <NavLink to={`/brands/${current.brandId}/dashboard`}>Dashboard</NavLink>
            <NavLink to={`/brands/${current.brandId}/program`}>Program</NavLink>
            <NavLink to={`/brands/${current.brandId}/team`}>Team</NavLink>
            <NavLink to={`/brands/${current.brandId}/perks`}>Perks</NavLink>
            <NavLink to={`/brands/${current.brandId}/members`}>Members</NavLink>
            <NavLink to={`/brands/${current.brandId}/integrations`}>Integrations</NavLink>
            <NavLink to={`/brands/${current.brandId}/billing`}>Billing</NavLink>
            <NavLink to={`/brands/${current.brandId}/audit`}>Audit log</NavLink>
          </nav>
        ) : null}
        <div className="account">
          {session.data.user?.operator ? <NavLink to="/operator">Operator</NavLink> : null}
          <NavLink to="/account">{session.data.user?.email}</NavLink>
          <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {current ? (
          <p className="brand-line">
            <span className="brand-name">{current.brandName}</span> <span className="role">{current.role}</span>
          </p>
        ) : null}
        <Outlet />
      </main>
    </div>
  );
}
