import type { PortalMembership } from '@pts/shared/schemas/portal';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link, NavLink, Outlet, useLocation, useMatches, useNavigate, useParams } from 'react-router';
import { api } from './api.ts';
import { describeError } from './errors/describe.ts';
import { pageTitle } from './page-title.ts';
import { useMembership, useSession } from './session.ts';

/** The signed-in frame: brand switcher, the pages that work, the account menu; the document's title. */
export function Layout() {
  const session = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  const queryClient = useQueryClient();
  const { brandId } = useParams();
  const current = useMembership(brandId);
  const matches = useMatches();
  const page = [...matches].reverse().find((match) => (match.handle as { title?: string } | undefined)?.title);
  const title = pageTitle((page?.handle as { title: string } | undefined)?.title, current?.brandName);
  useEffect(() => {
    document.title = title;
  }, [title]);
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
  if (session.isError)
    return <p role="alert">The portal could not reach the server: {describeError(session.error).message}</p>;
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
          <div className="brand-line">
            <span className="brand-name">{current.brandName}</span> <span className="role">{current.role}</span>
            <BrandSwitcher current={current.brandId} brands={session.data.brands} />
          </div>
        ) : null}
        <Outlet />
      </main>
    </div>
  );
}

/**
 * For a person in several brands: the same page in another brand (a brand's own page such as one member or
 * one perk goes to that brand's dashboard instead). Nothing for a person in one brand.
 */
function BrandSwitcher({ current, brands }: { current: string; brands: PortalMembership[] }) {
  const navigate = useNavigate();
  const location = useLocation();
  if (brands.length < 2) return null;
  const section = /^\/brands\/[^/]+\/([a-z-]+)$/.exec(location.pathname)?.[1] ?? 'dashboard';
  return (
    <label className="brand-switcher">
      Switch brand{' '}
      <select value={current} onChange={(event) => navigate(`/brands/${event.target.value}/${section}`)}>
        {brands.some((brand) => brand.brandId === current) ? null : <option value={current}>(operator view)</option>}
        {brands.map((brand) => (
          <option key={brand.brandId} value={brand.brandId}>
            {brand.brandName} ({brand.role})
          </option>
        ))}
      </select>
    </label>
  );
}
