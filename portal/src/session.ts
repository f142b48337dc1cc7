import type { PortalMembership } from '@pts/shared/schemas/portal';
import { type QueryClient, useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { loadSession } from './api.ts';
import { brandQuery, sessionQuery } from './queries/session.ts';

export function useSession() {
  return useQuery(sessionQuery());
}

/**
 * After a sign-in (or a password set by a link): the session is read again and cached before the portal
 * navigates. Invalidating alone is not enough: with no page watching the session (the sign-in page does not),
 * the signed-out answer stayed cached and the frame sent the person straight back to the sign-in form.
 */
export async function refreshSession(queryClient: QueryClient): Promise<void> {
  queryClient.setQueryData(sessionQuery().queryKey, await loadSession());
}

/**
 * The user's membership of the brand: their own, or, for a platform operator who is not in its team, a
 * read-only `viewer` view of it (docs/portal.md, "Operators"; the server answers the same). Undefined otherwise.
 */
export function useMembership(brandId: string | undefined): PortalMembership | undefined {
  const session = useSession();
  const id = brandId?.toLowerCase() ?? '';
  const own = session.data?.brands.find((brand) => brand.brandId === id);
  const operatorView = id !== '' && !own && session.data?.user?.operator === true;
  const brand = useQuery({ ...brandQuery(id), enabled: operatorView });
  if (own) return own;
  if (operatorView && brand.data) return { brandId: id, brandName: brand.data.brand.name, role: 'viewer' };
  return undefined;
}

/** The brand of the current page and the user's role in it (undefined when not a member). */
export function useBrand(): { brandId: string; membership: PortalMembership | undefined } {
  const { brandId = '' } = useParams();
  const membership = useMembership(brandId);
  return { brandId: brandId.toLowerCase(), membership };
}

/** Whether the role may change the program (rules, perks, …): admins and owners. */
export const canEdit = (membership: PortalMembership | undefined) =>
  membership?.role === 'owner' || membership?.role === 'admin';
export const isOwner = (membership: PortalMembership | undefined) => membership?.role === 'owner';
