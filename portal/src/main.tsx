// First: zod must be jitless before any shared schema module builds a schema (no CSP violation).
import './zod-jitless.ts';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { type ComponentType, StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { RouteError } from './errors/RouteError.tsx';
import { Layout } from './Layout.tsx';
import { DashboardPage } from './pages/DashboardPage.tsx';
import { HomePage } from './pages/HomePage.tsx';
import { InvitePage } from './pages/InvitePage.tsx';
import { ResetPage } from './pages/ResetPage.tsx';
import { SignInPage } from './pages/SignInPage.tsx';
import './styles.css';

/**
 * A page loaded when first opened: the first visit downloads only what the sign-in page, the home page and the
 * dashboard need (docs/benchmarks.md, "Portal first visit"); the other pages come as their own chunks.
 */
const page =
  <K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K) =>
  async () => ({ Component: (await load())[name] });

const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 5_000 } },
});

const router = createBrowserRouter(
  [
    { path: '/sign-in', element: <SignInPage />, errorElement: <RouteError /> },
    { path: '/invite', element: <InvitePage />, errorElement: <RouteError /> },
    { path: '/reset', element: <ResetPage />, errorElement: <RouteError /> },
    {
      element: <Layout />,
      errorElement: <RouteError />,
      children: [
        {
          // A page that fails (its code did not load, it threw while drawing) shows RouteError inside the frame.
          errorElement: <RouteError />,
          children: [
            // `handle.title`: the page's name in the document title (Layout: "Program · Acme · pts portal").
            // Pages past the dashboard load on first open (`lazy`), so a first visit fetches less JavaScript.
            { index: true, element: <HomePage />, handle: { title: 'Your brands' } },
            {
              path: 'account',
              lazy: page(() => import('./pages/AccountPage.tsx'), 'AccountPage'),
              handle: { title: 'Your account' },
            },
            {
              path: 'operator',
              lazy: page(() => import('./pages/OperatorPage.tsx'), 'OperatorPage'),
              handle: { title: 'Operator' },
            },
            { path: 'brands/:brandId/dashboard', element: <DashboardPage />, handle: { title: 'Dashboard' } },
            {
              path: 'brands/:brandId/program',
              lazy: page(() => import('./pages/ProgramPage.tsx'), 'ProgramPage'),
              handle: { title: 'Program' },
            },
            {
              path: 'brands/:brandId/team',
              lazy: page(() => import('./pages/TeamPage.tsx'), 'TeamPage'),
              handle: { title: 'Team' },
            },
            {
              path: 'brands/:brandId/perks',
              lazy: page(() => import('./pages/PerksPage.tsx'), 'PerksPage'),
              handle: { title: 'Perks' },
            },
            {
              path: 'brands/:brandId/perks/:perkId',
              lazy: page(() => import('./pages/PerkPage.tsx'), 'PerkPage'),
              handle: { title: 'Perk' },
            },
            {
              path: 'brands/:brandId/members',
              lazy: page(() => import('./pages/MembersPage.tsx'), 'MembersPage'),
              handle: { title: 'Members' },
            },
            {
              path: 'brands/:brandId/members/:userKey',
              lazy: page(() => import('./pages/MemberPage.tsx'), 'MemberPage'),
              handle: { title: 'Member' },
            },
            {
              path: 'brands/:brandId/integrations',
              lazy: page(() => import('./pages/IntegrationsPage.tsx'), 'IntegrationsPage'),
              handle: { title: 'Integrations' },
            },
            {
              path: 'brands/:brandId/billing',
              lazy: page(() => import('./pages/BillingPage.tsx'), 'BillingPage'),
              handle: { title: 'Billing' },
            },
            {
              path: 'brands/:brandId/audit',
              lazy: page(() => import('./pages/AuditPage.tsx'), 'AuditPage'),
              handle: { title: 'Audit log' },
            },
            { path: '*', element: <RouteError notFound />, handle: { title: 'Not found' } },
          ],
        },
      ],
    },
  ],
  { basename: '/portal' },
);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
