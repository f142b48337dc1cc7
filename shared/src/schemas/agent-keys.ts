import { z } from 'zod';

/** Agent key tiers: `converse` needs pro or enterprise (docs/agent-api.md, "Keys"). */
export const agentTierSchema = z.enum(['free', 'pro', 'enterprise']);

/** `POST /admin/agent-keys`: a new agent key. */
export const createAgentKeyRequestSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  brandIds: z
    .array(z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'a brand id is a 0x address'))
    .max(1000)
    .optional(),
  canManageProgram: z.boolean().optional(),
  canOnboard: z.boolean().optional(),
  tier: agentTierSchema.optional(),
  ratePerMinute: z.number().int().min(1).max(100_000).optional(),
});
export type CreateAgentKeyRequest = z.infer<typeof createAgentKeyRequestSchema>;

/** The new key: the secret is shown this once (it signs requests; pts keeps it encrypted). */
export const createdAgentKeySchema = z.object({ keyId: z.string(), secret: z.string() });
export type CreatedAgentKey = z.infer<typeof createdAgentKeySchema>;

/** A key as listed: never its secret. */
export const agentKeySchema = z.object({
  keyId: z.string(),
  name: z.string(),
  brandIds: z.array(z.string()),
  canManageProgram: z.boolean(),
  canOnboard: z.boolean(),
  tier: agentTierSchema,
  ratePerMinute: z.number().int(),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
});
export type AgentKey = z.infer<typeof agentKeySchema>;

export const agentKeyListSchema = z.object({ agentKeys: z.array(agentKeySchema) });
export const revokedAgentKeySchema = z.object({ keyId: z.string(), revoked: z.boolean() });
