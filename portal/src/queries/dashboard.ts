import { brandAnalyticsSchema } from '@pts/shared/schemas/analytics';
import { queryOptions } from '@tanstack/react-query';
import { request } from '../api.ts';

/** The brand's dashboard over the last `days` days. */
export const dashboardQuery = (brandId: string, days: number) =>
  queryOptions({
    queryKey: ['brand', brandId, 'dashboard', days] as const,
    queryFn: () => request(brandAnalyticsSchema, 'GET', `/brands/${brandId}/dashboard?days=${days}`),
  });
