// First: zod must be jitless before any shared schema module builds a schema (no CSP violation).
import './zod-jitless.ts';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { Layout } from './Layout.tsx';
import { AccountPage } from './pages/AccountPage.tsx';
import { AuditPage } from './pages/AuditPage.tsx';
import { BillingPage } from './pages/BillingPage.tsx';
import { DashboardPage } from './pages/DashboardPage.tsx';
import { HomePage } from './pages/HomePage.tsx';
import { IntegrationsPage } from './pages/IntegrationsPage.tsx';
import { InvitePage } from './pages/InvitePage.tsx';
import { MemberPage } from './pages/MemberPage.tsx';
import { MembersPage } from './pages/MembersPage.tsx';
import { OperatorPage } from './pages/OperatorPage.tsx';
import { PerkPage } from './pages/PerkPage.tsx';
import { PerksPage } from './pages/PerksPage.tsx';
import { ProgramPage } from './pages/ProgramPage.tsx';
import { ResetPage } from './pages/ResetPage.tsx';
import { SignInPage } from './pages/SignInPage.tsx';
import { TeamPage } from './pages/TeamPage.tsx';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 5_000 } },
});

const router = createBrowserRouter(
  [
    { path: '/sign-in', element: <SignInPage /> },
    { path: '/invite', element: <InvitePage /> },
    { path: '/reset', element: <ResetPage /> },
    {
      element: <Layout />,
      children: [
        // `handle.title`: the page's name in the document title (Layout: "Program · Acme · pts portal").
        { index: true, element: <HomePage />, handle: { title: 'Your brands' } },
        { path: 'account', element: <AccountPage />, handle: { title: 'Your account' } },
        { path: 'operator', element: <OperatorPage />, handle: { title: 'Operator' } },
        { path: 'brands/:brandId/dashboard', element: <DashboardPage />, handle: { title: 'Dashboard' } },
        { path: 'brands/:brandId/program', element: <ProgramPage />, handle: { title: 'Program' } },
        { path: 'brands/:brandId/team', element: <TeamPage />, handle: { title: 'Team' } },
        { path: 'brands/:brandId/perks', element: <PerksPage />, handle: { title: 'Perks' } },
        { path: 'brands/:brandId/perks/:perkId', element: <PerkPage />, handle: { title: 'Perk' } },
        { path: 'brands/:brandId/members', element: <MembersPage />, handle: { title: 'Members' } },
        { path: 'brands/:brandId/members/:userKey', element: <MemberPage />, handle: { title: 'Member' } },
        { path: 'brands/:brandId/integrations', element: <IntegrationsPage />, handle: { title: 'Integrations' } },
        { path: 'brands/:brandId/billing', element: <BillingPage />, handle: { title: 'Billing' } },
        { path: 'brands/:brandId/audit', element: <AuditPage />, handle: { title: 'Audit log' } },
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
