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
        { index: true, element: <HomePage /> },
        { path: 'account', element: <AccountPage /> },
        { path: 'operator', element: <OperatorPage /> },
        { path: 'brands/:brandId/dashboard', element: <DashboardPage /> },
        { path: 'brands/:brandId/program', element: <ProgramPage /> },
        { path: 'brands/:brandId/team', element: <TeamPage /> },
        { path: 'brands/:brandId/perks', element: <PerksPage /> },
        { path: 'brands/:brandId/perks/:perkId', element: <PerkPage /> },
        { path: 'brands/:brandId/members', element: <MembersPage /> },
        { path: 'brands/:brandId/members/:userKey', element: <MemberPage /> },
        { path: 'brands/:brandId/integrations', element: <IntegrationsPage /> },
        { path: 'brands/:brandId/billing', element: <BillingPage /> },
        { path: 'brands/:brandId/audit', element: <AuditPage /> },
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
