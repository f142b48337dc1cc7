import { randomUUID } from 'node:crypto';
import {
  AppError,
  BULK_EVENTS_MAX,
  brandIdSchema,
  cleanString,
  type EventRequest,
  emailSchema,
  eventRequestSchema,
  eventTypeSchema,
  metadataSchema,
  PRIVILEGED_SOURCES,
} from '@pts/shared';
import { z } from 'zod';
import { brandNotFound } from '../../../modules/brands/brands.service.ts';
import { requireBrandAuthority } from '../../actions/brand-authority.ts';
import type { AgentPrincipal } from '../../agent-tool.ts';
import type { EventToolDeps } from './actions-tool-deps.ts';

/** A user id no earlier example call used: an example may run once per surface (REST, MCP, converse). */
export const freshExampleUser = (label: string) => `agent-example-${label}-${randomUUID().slice(0, 8)}@example.com`;

/** Most events one `process_bulk_events` call carries (the event API's bulk bound, spec 8). */
export const AGENT_BULK_EVENTS_MAX = BULK_EVENTS_MAX;

/** An email-shaped user id (`alice@example.com`, or a platform identity `discord_123@pts.example`), lowercase. */
export const userIdSchema = emailSchema;

/**
 * Metadata an agent key may not set: they are the brand's own privileges (its security key signs them),
 * never an agent's — skipping cooldowns, privileged sources and hashtag campaign rewards.
 */
function refusePrivilegedMetadata(metadata: Record<string, unknown> | undefined): void {
  if (!metadata) return;
  const claimed: string[] = [];
  if (metadata.skip_cooldown !== undefined) claimed.push('metadata.skip_cooldown');
  if (metadata.campaign_id !== undefined) claimed.push('metadata.campaign_id');
  if (typeof metadata.source === 'string' && (PRIVILEGED_SOURCES as readonly string[]).includes(metadata.source)) {
    claimed.push(`metadata.source=${metadata.source}`);
  }
  if (claimed.length > 0) {
    throw new AppError(
      'FORBIDDEN',
      `An agent key cannot claim ${claimed.join(', ')}: only the brand's own signed requests may; remove ${claimed.length === 1 ? 'it' : 'them'}`,
      { reason: 'privileged_metadata', fields: claimed },
    );
  }
}

export const processEventBody = z
  .object({
    brandId: brandIdSchema,
    /** The rule's event type (get_brand lists them) … */
    eventType: eventTypeSchema.optional(),
    /** … or the rule's eventId from get_brand. */
    eventId: cleanString(z.string().min(1, 'eventId must not be empty').max(100)).optional(),
    userId: userIdSchema,
    metadata: metadataSchema.optional(),
    externalId: eventRequestSchema.shape.externalId,
    /** What the event is worth (an order's total): a rate rule pays by it. */
    value: eventRequestSchema.shape.value,
  })
  .refine((body) => (body.eventType === undefined) !== (body.eventId === undefined), {
    message: 'give exactly one of eventType and eventId',
    path: ['eventType'],
  });
type ProcessEventBody = z.output<typeof processEventBody>;

/** The agent body as the event pipeline's request, after the key's authority and privileges are checked. */
export async function toEventRequest(
  d: EventToolDeps,
  body: ProcessEventBody,
  principal: AgentPrincipal | undefined,
): Promise<EventRequest> {
  requireBrandAuthority(principal, body.brandId, 'Sending an event');
  refusePrivilegedMetadata(body.metadata);
  let eventType = body.eventType;
  if (eventType === undefined) {
    const cached = await d.events.brands.get(body.brandId);
    if (!cached) throw brandNotFound(body.brandId);
    const rule = [...cached.rulesByType.values()].find((candidate) => candidate.id === body.eventId);
    if (!rule) {
      throw new AppError(
        'RULE_NOT_FOUND',
        `Brand ${body.brandId} has no event rule ${body.eventId}; get_brand lists them`,
        {
          field: 'eventId',
          value: String(body.eventId),
        },
      );
    }
    eventType = rule.event_type;
  }
  return {
    brandId: body.brandId,
    eventType,
    userEmail: body.userId,
    // Which key sent it, for the brand's audit trail (events.metadata).
    metadata: { ...(body.metadata ?? {}), agentKeyId: (principal as AgentPrincipal).keyId },
    ...(body.externalId === undefined ? {} : { externalId: body.externalId }),
    ...(body.value === undefined ? {} : { value: body.value }),
  };
}

/**
 * The key is authenticated for the brand, which stands in for the brand's domain or signature check
 * (`signed: true`); the privileges a brand signature would also unlock were refused in toEventRequest.
 */
export const agentEventContext = (principal: AgentPrincipal) =>
  ({ signed: true, agentKeyId: principal.keyId }) as const;
