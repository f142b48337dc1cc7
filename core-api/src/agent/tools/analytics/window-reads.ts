import { AppError } from '@pts/shared';
import { rememberRead } from '../../../caching/answer-cache.ts';
import type { EventTypeActivity, WindowTotals } from '../../../modules/analytics/analytics.repository.ts';
import type { TimeWindow } from '../../analytics/formulas.ts';
import type { DirectoryBrand } from '../../discovery/brand-directory.repository.ts';
import { BRANDS_LIST_MAX } from '../discovery/discovery-schemas.ts';
import type { WindowReadDeps } from './analytics-tool-deps.ts';

/** Every brand of a category from the directory, paging through it (the directory's own filter). */
export async function brandsOfCategory(d: WindowReadDeps, wanted: string | undefined): Promise<DirectoryBrand[]> {
  const all: DirectoryBrand[] = [];
  for (let offset = 0; ; offset += BRANDS_LIST_MAX) {
    const page = await d.analyticsReads.listDirectoryBrands({ category: wanted, limit: BRANDS_LIST_MAX, offset });
    all.push(...page.brands);
    if (page.brands.length < BRANDS_LIST_MAX) return all;
  }
}

/** 404 naming every unknown Brand ID of a list. */
export async function requireBrands(d: WindowReadDeps, brandIds: string[]): Promise<Map<string, string>> {
  const names = await d.analyticsReads.readBrandNames(brandIds);
  const unknown = brandIds.filter((id) => !names.has(id));
  if (unknown.length > 0) {
    throw new AppError('NOT_FOUND', `No brand ${unknown.join(', ')}`, { field: 'brandIds', value: unknown.join(',') });
  }
  return names;
}

/**
 * One brand's (or the network's) totals over one window, shared by brand analytics, health, comparisons and
 * the network view through the answer cache: keyed by the window's length and how long ago it ended.
 */
export function windowTotals(
  d: WindowReadDeps,
  brandId: string | undefined,
  window: TimeWindow,
): Promise<WindowTotals> {
  return rememberRead(d, 'window_totals', windowKey(d, brandId, window), () =>
    d.analyticsReads.readWindowTotals(brandId, window),
  );
}

/** One brand's (or the network's) activity per event type over one window, shared like `windowTotals`. */
export function eventTypeActivity(
  d: WindowReadDeps,
  brandId: string | undefined,
  window: TimeWindow,
): Promise<EventTypeActivity[]> {
  return rememberRead(d, 'event_type_activity', windowKey(d, brandId, window), () =>
    d.analyticsReads.readEventTypeActivity(brandId, window),
  );
}

/** A scope and a window as a cache key: the window's length and how many days ago it ended. */
function windowKey(d: WindowReadDeps, brandId: string | undefined, window: TimeWindow) {
  const endedAgoMs = d.clock.now().getTime() - window.to.getTime();
  return { brandId: brandId ?? '*', days: window.days, endedAgoDays: Math.round(endedAgoMs / 86_400_000) };
}
