import { achievementDefinitionsResponseSchema } from '@pts/shared/schemas/achievements';
import { ruleSchema } from '@pts/shared/schemas/brands';
import { campaignsResponseSchema } from '@pts/shared/schemas/community';
import { dropsResponseSchema } from '@pts/shared/schemas/compat';
import { streakSettingsResponseSchema } from '@pts/shared/schemas/streaks';
import { tierDistributionSchema, tiersResponseSchema } from '@pts/shared/schemas/tiers';
import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod';
import { request } from '../api.ts';

/** The brand's program: rules, drops, campaigns, streaks and achievements (the Program page and its sections). */
export const rulesAnswerSchema = z.object({ rules: z.array(ruleSchema) });

/** The brand's event rules; the Program page and the chat-group form (a group's rewards write to them) share it. */
export const rulesQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'rules'] as const,
    queryFn: () => request(rulesAnswerSchema, 'GET', `/brands/${brandId}/rules`),
  });

export const dropsQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'drops'] as const,
    queryFn: () => request(dropsResponseSchema, 'GET', `/brands/${brandId}/drops`),
  });

export const campaignsQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'campaigns'] as const,
    queryFn: () => request(campaignsResponseSchema, 'GET', `/brands/${brandId}/campaigns`),
  });

export const streakSettingsQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'streak-settings'] as const,
    queryFn: () => request(streakSettingsResponseSchema, 'GET', `/brands/${brandId}/streak-settings`),
  });

export const achievementsQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'achievements'] as const,
    queryFn: () => request(achievementDefinitionsResponseSchema, 'GET', `/brands/${brandId}/achievements`),
  });

/** The answer of a rule change (set, archive, restore): the rule as it is now. */
export const ruleAnswerSchema = z.object({ rule: ruleSchema });

/** The brand's VIP tier table (Program page, "VIP tiers"). */
export const tiersQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'tiers'] as const,
    queryFn: () => request(tiersResponseSchema, 'GET', `/brands/${brandId}/tiers`),
  });

/** How many members hold each tier (the dashboard). */
export const tierDistributionQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'tiers', 'distribution'] as const,
    queryFn: () => request(tierDistributionSchema, 'GET', `/brands/${brandId}/tiers/distribution`),
  });
