import { portalPerkDetailSchema } from '@pts/shared/schemas/brand-members';
import { portalPerksResponseSchema } from '@pts/shared/schemas/perks';
import { queryOptions } from '@tanstack/react-query';
import { request } from '../api.ts';

/** The brand's perks (the Perks page) and one perk with its constraints and redemptions (the Perk page). */
export const perksQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'perks'] as const,
    queryFn: () => request(portalPerksResponseSchema, 'GET', `/brands/${brandId}/perks`),
  });

export const perkQuery = (brandId: string, perkId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'perks', perkId] as const,
    queryFn: () => request(portalPerkDetailSchema, 'GET', `/brands/${brandId}/perks/${perkId}`),
  });
