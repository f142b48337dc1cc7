import { auditPageSchema } from '@pts/shared/schemas/audit';
import { createdBrandSchema } from '@pts/shared/schemas/brands';
import { portalInviteSchema, portalInviteSentSchema, portalTeamSchema } from '@pts/shared/schemas/portal';
import { operatorBrandsSchema } from '@pts/shared/schemas/portal-operator';
import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod';
import { request } from '../api.ts';

/** The brand's team: members with their roles, and pending invites. */
export const teamQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'team'] as const,
    queryFn: () => request(portalTeamSchema, 'GET', `/brands/${brandId}/team`),
  });

/** The audit log, filtered (`search` is the query string of the filter, `''` for none). */
export const auditQuery = (brandId: string, search: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'audit', search] as const,
    queryFn: () => request(auditPageSchema, 'GET', `/brands/${brandId}/audit${search ? `?${search}` : ''}`),
  });

/** Every brand, for a platform operator (the Operator page). */
export const operatorBrandsQuery = () =>
  queryOptions({
    queryKey: ['operator', 'brands'] as const,
    queryFn: () => request(operatorBrandsSchema, 'GET', '/operator/brands'),
  });

/** The answers the team's and the operator's forms read: a sent invite (its link when no mail server) and a new brand. */
export const inviteSentAnswerSchema = portalInviteSchema.partial({ inviteUrl: true });
export const teamInviteSentAnswerSchema = portalInviteSentSchema.extend({ inviteUrl: z.string().optional() });
export const createdBrandAnswerSchema = z.object({ brand: createdBrandSchema });
