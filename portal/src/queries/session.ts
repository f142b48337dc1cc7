import { brandSchema } from '@pts/shared/schemas/brands';
import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod';
import { loadSession, request } from '../api.ts';

/** The signed-in person, their brands and the CSRF token (read again after a sign-in; `refreshSession`). */
export const sessionQuery = () =>
  queryOptions({ queryKey: ['session'] as const, queryFn: loadSession, staleTime: 30_000 });

const brandAnswerSchema = z.object({ brand: brandSchema });

/** One brand's public settings (an operator's read-only view of a brand they are not in). */
export const brandQuery = (brandId: string) =>
  queryOptions({
    queryKey: ['brand', brandId, 'settings'] as const,
    queryFn: () => request(brandAnswerSchema, 'GET', `/brands/${brandId}`),
  });
