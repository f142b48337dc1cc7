import { lazy, Suspense } from 'react';

// Loaded when the Program page first shows them, so the portal's initial JavaScript stays small.
const StreaksSection = lazy(() => import('./StreaksSection.tsx'));
const AchievementsSection = lazy(() => import('./AchievementsSection.tsx'));
const TiersSection = lazy(() => import('./TiersSection.tsx'));

/** The Program page's VIP tiers, streak settings, milestones and achievements (docs/portal.md, "Program"). */
export function EngagementSections() {
  return (
    <Suspense fallback={<p className="loading">Loading tiers, streaks and achievements…</p>}>
      <TiersSection />
      <StreaksSection />
      <AchievementsSection />
    </Suspense>
  );
}
