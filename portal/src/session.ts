import type { PortalMembership } from '@pts/shared/schemas/portal';
import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { loadSession } from './api.ts';

export function useSession() {
  return useQuery({ queryKey: ['session'], queryFn: loadSession, staleTime: 30_000 });
}

/** The brand of the current page and the user's role in it (undefined when not a member). */
export function useBrand(): { brandId: string; membership: PortalMembership | undefined } {
  const { brandId = '' } = useParams();
  const session = useSession();
  const membership = session.data?.brands.find((brand) => brand.brandId === brandId.toLowerCase());
  return { brandId: brandId.toLowerCase(), membership };
}

/** Whether the role may change the program (rules, perks, …): admins and owners. */
export const canEdit = (membership: PortalMembership | undefined) =>
  membership?.role === 'owner' || membership?.role === 'admin';
export const isOwner = (membership: PortalMembership | undefined) => membership?.role === 'owner';
