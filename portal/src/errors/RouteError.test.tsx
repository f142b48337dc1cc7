import { cleanup, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RouteError } from './RouteError.tsx';

afterEach(cleanup);

function Broken(): never {
  throw new TypeError('Failed to fetch dynamically imported module');
}

/** The portal's route shape in small: a frame, its pages under an error boundary, and a catch-all. */
const routerAt = (path: string) =>
  createMemoryRouter(
    [
      {
        path: '/',
        element: <p>Your brands</p>,
        errorElement: <RouteError />,
      },
      {
        errorElement: <RouteError />,
        children: [
          { path: '/broken', element: <Broken /> },
          { path: '*', element: <RouteError notFound /> },
        ],
      },
    ],
    { initialEntries: [path] },
  );

describe('RouteError', () => {
  it('a page that throws shows what happened and the ways back, never a blank page', async () => {
    // React reports the caught error on the console; the page itself is what this test reads.
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    render(<RouterProvider router={routerAt('/broken')} />);
    expect((await screen.findByRole('heading')).textContent).toBe('This page could not be shown');
    // A page whose code did not load (fetch refused) is said as the network's failure.
    expect(screen.getByRole('alert').textContent).toMatch(/could not reach the server/);
    expect(screen.getByRole('link', { name: 'Back to your brands' }).getAttribute('href')).toBe('/');
    expect(screen.getByRole('button', { name: 'Try again' })).toBeTruthy();
    quiet.mockRestore();
  });

  it('an address with no page says so and links back', async () => {
    render(<RouterProvider router={routerAt('/brands/0xabc/nothing-here')} />);
    expect((await screen.findByRole('heading')).textContent).toBe('There is no page at this address');
    expect(screen.getByRole('link', { name: 'Back to your brands' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Try again' })).toBeNull();
  });
});
