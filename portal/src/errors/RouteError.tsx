import { isRouteErrorResponse, Link, useRouteError } from 'react-router';
import { describeError } from './describe.ts';

/**
 * The error element of every route: a page that failed to load its code, threw while drawing, or an address
 * with no page shows what happened and the ways back, never a blank page. Under the frame a failing page keeps
 * the navigation (the error shows where the page would be).
 */
export function RouteError({ notFound = false }: { notFound?: boolean }) {
  const error = useRouteError();
  const missing = notFound || (isRouteErrorResponse(error) && error.status === 404);
  return (
    <div className="route-error">
      <section role="alert" aria-labelledby="route-error-heading">
        <h1 id="route-error-heading">
          {missing ? 'There is no page at this address' : 'This page could not be shown'}
        </h1>
        <p>
          {missing
            ? 'The link may be old or mistyped.'
            : isRouteErrorResponse(error)
              ? `${error.status} ${error.statusText}`
              : describeError(error).message}
        </p>
        <p className="row">
          <Link to="/">Back to your brands</Link>
          {missing ? null : (
            <button type="button" className="secondary" onClick={() => window.location.reload()}>
              Try again
            </button>
          )}
        </p>
      </section>
    </div>
  );
}
