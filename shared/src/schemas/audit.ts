import { z } from 'zod';
import { portalAuditEntrySchema } from './portal.ts';

/**
 * A brand's audit log (docs/portal.md, "Audit log"): every change to its program, team, keys and
 * integrations, with who made it. `actorKind` sorts the `actor` texts: `portal` (`portal:<email>`), `operator`
 * (`operator:<email>`: a platform operator in the portal), `admin`
 * (the admin token: the CLI and the admin API), `agent` (`agent:<keyId>`), `brand` (`brand-key`: a request
 * signed with the brand's security key), `system` (the platform itself: seeding, drops, chat-group setup,
 * pregeneration).
 */
export const AUDIT_ACTOR_KINDS = ['portal', 'operator', 'admin', 'agent', 'brand', 'system'] as const;
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];
export const AUDIT_PAGE_MAX = 200;

export const auditEntrySchema = portalAuditEntrySchema
  .extend({
    actorKind: z.enum(AUDIT_ACTOR_KINDS),
    subject: z.string().nullable().describe('What changed: the brand, a perk id, an agent key id, …'),
  })
  .meta({ id: 'AuditEntry' });
export type AuditEntry = z.infer<typeof auditEntrySchema>;

const isoDate = (field: string) =>
  z.coerce.date({ message: `${field} must be an ISO 8601 date or date-time` }).optional();

export const auditQuerySchema = z.object({
  actorKind: z
    .enum(AUDIT_ACTOR_KINDS, { message: `actorKind must be one of ${AUDIT_ACTOR_KINDS.join(', ')}` })
    .optional(),
  actor: z.string().trim().max(320, 'actor must be at most 320 characters').optional().describe('Part of the actor'),
  action: z
    .string()
    .trim()
    .max(100, 'action must be at most 100 characters')
    .optional()
    .describe('An action or its prefix: `rule`, `perk.update`, `portal.`'),
  from: isoDate('from').describe('Entries at or after'),
  to: isoDate('to').describe('Entries before'),
  before: z
    .string()
    .regex(/^\d{1,18}$/, 'before must be an entry id')
    .optional()
    .describe('Entries older than this id (the previous page’s nextBefore)'),
  limit: z.coerce
    .number({ message: 'limit must be a number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(AUDIT_PAGE_MAX, `limit must be at most ${AUDIT_PAGE_MAX}`)
    .default(50),
});
export type AuditQuery = z.infer<typeof auditQuerySchema>;

export const auditPageSchema = z
  .object({
    success: z.literal(true),
    entries: z.array(auditEntrySchema),
    nextBefore: z.string().nullable().describe('Pass as `before` for the next (older) page; null on the last'),
  })
  .meta({ id: 'AuditPage' });
export type AuditPage = z.infer<typeof auditPageSchema>;
