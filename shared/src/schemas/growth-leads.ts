import { z } from 'zod';

/** A growth lead as the operator reads it (`GET /admin/growth-leads`, docs/agent-api/growth.md). */
export const growthLeadSchema = z.object({
  leadId: z.string(),
  businessName: z.string(),
  contactEmail: z.string(),
  website: z.string(),
  industry: z.string(),
  /** Requests from the same contact for the same business inside the dedupe window. */
  requestCount: z.number().int(),
  createdAt: z.string(),
  lastRequestedAt: z.string(),
});
export type GrowthLead = z.infer<typeof growthLeadSchema>;

export const growthLeadListSchema = z.object({ leads: z.array(growthLeadSchema) });
