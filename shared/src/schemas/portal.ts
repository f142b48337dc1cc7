import { z } from 'zod';
import { brandIdSchema, emailSchema } from './common.ts';

// The brand portal's JSON (docs/portal.md): core-api validates with these, the portal's pages type with them.

export const PORTAL_ROLES = ['owner', 'admin', 'viewer'] as const;
export const portalRoleSchema = z.enum(PORTAL_ROLES);
export type PortalRole = z.infer<typeof portalRoleSchema>;

/** Passwords: long enough to resist guessing, short enough that hashing stays cheap. */
export const portalPasswordSchema = z
  .string()
  .min(10, 'must be at least 10 characters')
  .max(200, 'must be at most 200 characters');

export const portalSignInRequestSchema = z
  .object({ email: emailSchema, password: z.string().min(1, 'is required').max(200) })
  .meta({ id: 'PortalSignInRequest' });
export type PortalSignInRequest = z.input<typeof portalSignInRequestSchema>;

/** An invite or reset link's token: what follows `#token=` in the link. */
export const portalLinkTokenSchema = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'is not a link token');

export const portalAcceptInviteRequestSchema = z
  .object({ token: portalLinkTokenSchema, password: portalPasswordSchema })
  .meta({ id: 'PortalAcceptInviteRequest' });

/** `POST /portal/api/invites/join`: the signed-in person (an existing account) accepts an invite to their e-mail. */
export const portalJoinInviteRequestSchema = z
  .object({ token: portalLinkTokenSchema })
  .meta({ id: 'PortalJoinInviteRequest' });
export const portalJoinedSchema = z
  .object({
    success: z.literal(true),
    /** The brand joined, or null for an operator invite. */
    brandId: z.string().nullable(),
    role: portalRoleSchema.nullable(),
    operator: z.boolean(),
  })
  .meta({ id: 'PortalJoined' });
export type PortalJoined = z.infer<typeof portalJoinedSchema>;

export const portalResetRequestSchema = z.object({ email: emailSchema }).meta({ id: 'PortalResetRequest' });
export const portalResetCompleteSchema = z
  .object({ token: portalLinkTokenSchema, password: portalPasswordSchema })
  .meta({ id: 'PortalResetComplete' });
export const portalChangePasswordSchema = z
  .object({ currentPassword: z.string().min(1).max(200), newPassword: portalPasswordSchema })
  .meta({ id: 'PortalChangePassword' });

export const portalMembershipSchema = z.object({
  brandId: z.string(),
  brandName: z.string(),
  role: portalRoleSchema,
});
export type PortalMembership = z.infer<typeof portalMembershipSchema>;

/** `GET /portal/api/session`: who is signed in (or not) and the CSRF token every change must carry. */
export const portalSessionSchema = z
  .object({
    signedIn: z.boolean(),
    csrfToken: z.string(),
    /** `operator`: a platform operator (docs/portal.md, "Operators"): every brand, readable; brands created here. */
    user: z.object({ id: z.string(), email: z.string(), operator: z.boolean() }).nullable(),
    brands: z.array(portalMembershipSchema),
  })
  .meta({ id: 'PortalSession' });
export type PortalSession = z.infer<typeof portalSessionSchema>;

export const portalInviteRequestSchema = z
  .object({ email: emailSchema, role: portalRoleSchema })
  .meta({ id: 'PortalInviteRequest' });
export type PortalInviteRequest = z.input<typeof portalInviteRequestSchema>;

/** An operator's invite (`POST /admin/portal/invites`, `pts portal invite`). */
export const portalAdminInviteRequestSchema = portalInviteRequestSchema
  .extend({ brandId: brandIdSchema })
  .meta({ id: 'PortalAdminInviteRequest' });

export const portalInviteSchema = z
  .object({
    email: z.string(),
    brandId: z.string(),
    role: portalRoleSchema,
    inviteUrl: z.string(),
    expiresAt: z.string(),
  })
  .meta({ id: 'PortalInvite' });
export type PortalInvite = z.infer<typeof portalInviteSchema>;

/** What an owner's invite answers in the portal: no link (it is mailed or logged, never shown). */
export const portalInviteSentSchema = z
  .object({ email: z.string(), role: portalRoleSchema, expiresAt: z.string() })
  .meta({ id: 'PortalInviteSent' });

export const portalTeamSchema = z
  .object({
    members: z.array(z.object({ userId: z.string(), email: z.string(), role: portalRoleSchema, since: z.string() })),
    pendingInvites: z.array(z.object({ email: z.string(), role: portalRoleSchema, expiresAt: z.string() })),
  })
  .meta({ id: 'PortalTeam' });
export type PortalTeam = z.infer<typeof portalTeamSchema>;

export const portalMemberRoleRequestSchema = z.object({ role: portalRoleSchema }).meta({ id: 'PortalMemberRole' });

export const portalBrandParamsSchema = z.object({ brandId: brandIdSchema });
export const portalMemberParamsSchema = portalBrandParamsSchema.extend({ userId: z.uuid('is not a user id') });
/** `DELETE /portal/api/brands/:brandId/invites/:email`: the e-mail whose pending invites are voided. */
export const portalInviteParamsSchema = portalBrandParamsSchema.extend({ email: emailSchema });

/** A person taken out of a brand's team (removed by an owner, or left): their pending invites are voided. */
export const portalTeamRemovalSchema = z
  .object({
    success: z.literal(true),
    userId: z.string(),
    email: z.string(),
    role: portalRoleSchema,
    /** Pending invites into the brand voided with them: those addressed to them and those they sent. */
    invitesRevoked: z.number().int(),
  })
  .meta({ id: 'PortalTeamRemoval' });
export type PortalTeamRemoval = z.infer<typeof portalTeamRemovalSchema>;

export const portalInviteRevocationSchema = z
  .object({ success: z.literal(true), email: z.string(), invitesRevoked: z.number().int() })
  .meta({ id: 'PortalInviteRevocation' });
export type PortalInviteRevocation = z.infer<typeof portalInviteRevocationSchema>;

export const portalSessionsEndedSchema = z
  .object({ success: z.literal(true), userId: z.string(), sessionsEnded: z.number().int() })
  .meta({ id: 'PortalSessionsEnded' });
export type PortalSessionsEnded = z.infer<typeof portalSessionsEndedSchema>;

export const portalAuditEntrySchema = z.object({
  id: z.string(),
  actor: z.string(),
  action: z.string(),
  details: z.record(z.string(), z.unknown()),
  at: z.string(),
});
export type PortalAuditEntry = z.infer<typeof portalAuditEntrySchema>;
