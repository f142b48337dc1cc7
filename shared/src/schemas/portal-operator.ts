import { z } from 'zod';
import { brandSchema } from './brands.ts';
import { emailSchema } from './common.ts';

// The platform operators' part of the brand portal (docs/portal.md, "Operators").

/** `POST /admin/portal/operator-invites` (`pts portal invite --operator`): makes a person an operator. */
export const portalOperatorInviteRequestSchema = z
  .strictObject({ email: emailSchema })
  .meta({ id: 'PortalOperatorInviteRequest' });

export const portalOperatorInviteSchema = z
  .object({ email: z.string(), operator: z.literal(true), inviteUrl: z.string(), expiresAt: z.string() })
  .meta({ id: 'PortalOperatorInvite' });
export type PortalOperatorInvite = z.infer<typeof portalOperatorInviteSchema>;

/**
 * `POST /admin/portal/operators/remove` (`pts portal remove-operator --email E`): takes the operator flag away
 * (the person keeps their brand memberships) and revokes their pending operator invites.
 */
export const portalOperatorRemovalRequestSchema = z
  .strictObject({ email: emailSchema })
  .meta({ id: 'PortalOperatorRemovalRequest' });

export const portalOperatorRemovalSchema = z
  .object({
    email: z.string(),
    operator: z.literal(false),
    /** Whether the person was an operator until now (false: only pending invites were revoked). */
    wasOperator: z.boolean(),
    invitesRevoked: z.number().int(),
  })
  .meta({ id: 'PortalOperatorRemoval' });
export type PortalOperatorRemoval = z.infer<typeof portalOperatorRemovalSchema>;

/**
 * A brand's portal state as operators see it: `active` (it has an owner), `invited` (an owner's invite is
 * pending, nobody owns it yet), `no_owner` (neither: invite its first owner).
 */
export const OPERATOR_BRAND_STATUSES = ['active', 'invited', 'no_owner'] as const;

/** One brand of the operators' list: the brand, its loyalty members (as its dashboard counts them), its team. */
export const operatorBrandSchema = brandSchema
  .extend({
    /** Members all time and active in the last 30 days: the dashboard's `members.total` and `active.month`. */
    members: z.object({ total: z.number().int(), activeMonth: z.number().int() }),
    team: z.object({
      owners: z.number().int(),
      members: z.number().int(),
      pendingOwnerInvites: z.number().int(),
    }),
    status: z.enum(OPERATOR_BRAND_STATUSES),
  })
  .meta({ id: 'OperatorBrand' });
export type OperatorBrand = z.infer<typeof operatorBrandSchema>;

export const operatorBrandsSchema = z
  .object({ success: z.literal(true), brands: z.array(operatorBrandSchema) })
  .meta({ id: 'OperatorBrands' });
export type OperatorBrands = z.infer<typeof operatorBrandsSchema>;
