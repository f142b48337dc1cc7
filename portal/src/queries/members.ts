import { memberListResponseSchema, memberProfileSchema } from '@pts/shared/schemas/brand-members';
import { memberTierResponseSchema } from '@pts/shared/schemas/tiers';
import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { request } from '../api.ts';

/** One page of the member list: sorted, filtered by `q`, from `cursor` (the previous page's `nextCursor`). */
export interface MemberListFilter {
  sort: string;
  order: 'asc' | 'desc';
  q: string;
  cursor: string | undefined;
  limit: number;
}

export const memberListQuery = (brandId: string, filter: MemberListFilter) => {
  const search = new URLSearchParams({
    sort: filter.sort,
    order: filter.order,
    ...(filter.q ? { q: filter.q } : {}),
    limit: String(filter.limit),
    ...(filter.cursor ? { cursor: filter.cursor } : {}),
  });
  return queryOptions({
    queryKey: ['brand', brandId, 'member-list', filter.sort, filter.order, filter.q, filter.cursor ?? ''] as const,
    queryFn: () => request(memberListResponseSchema, 'GET', `/brands/${brandId}/member-list?${search}`),
    placeholderData: keepPreviousData,
  });
};

/** One member's profile (balance, events and why each earned or was refused, block). */
export const memberQuery = (brandId: string, userKey: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'member', userKey] as const,
    queryFn: () =>
      request(memberProfileSchema, 'GET', `/brands/${brandId}/loyalty-members/${encodeURIComponent(userKey)}`),
  });

/** One member's VIP tier, the next one and what is left to reach it. */
export const memberTierQuery = (brandId: string, userKey: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'member', userKey, 'tier'] as const,
    queryFn: () =>
      request(
        memberTierResponseSchema,
        'GET',
        `/brands/${brandId}/loyalty-members/${encodeURIComponent(userKey)}/tier`,
      ),
  });
