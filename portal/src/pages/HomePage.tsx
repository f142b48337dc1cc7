import { Link, Navigate } from 'react-router';
import { useSession } from '../session.ts';

/** One brand: straight to its dashboard. Several: pick one. None: say how to get in. */
export function HomePage() {
  const { data } = useSession();
  const brands = data?.brands ?? [];
  if (data?.user?.operator && brands.length === 0) return <Navigate to="/operator" replace />;
  if (brands.length === 1) return <Navigate to={`/brands/${brands[0]!.brandId}/dashboard`} replace />;
  return (
    <section>
      <h1>Your brands</h1>
      {brands.length === 0 ? (
        <p>You are not in any brand yet: ask a brand owner (or the platform's operator) for an invite.</p>
      ) : (
        <ul className="cards">
          {brands.map((brand) => (
            <li key={brand.brandId}>
              <Link to={`/brands/${brand.brandId}/dashboard`}>{brand.brandName}</Link>{' '}
              <span className="role">{brand.role}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
