import { AppError, type BulkEventFailure, bulkEventFailureSchema, eventResponseSchema, isAppError } from '@pts/shared';
import { z } from 'zod';
import type { EventCandidate } from '../../../modules/events/event-batcher.ts';
import { bulkEventFailure } from '../../../modules/events/events.service.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import type { EventToolDeps } from './actions-tool-deps.ts';
import {
  AGENT_BULK_EVENTS_MAX,
  agentEventContext,
  freshExampleUser,
  processEventBody,
  toEventRequest,
} from './event-requests.ts';

const resultSchema = z.object({
  success: z.boolean(),
  processed: z.number().int(),
  failed: z.number().int(),
  results: z.array(z.union([eventResponseSchema, bulkEventFailureSchema])),
});

/** `process_bulk_events`: Up to N events in one call, each judged like process_event. */
export function processBulkEventsTool(d: EventToolDeps): AgentTool {
  return defineAgentTool({
    name: 'process_bulk_events',
    method: 'post',
    path: '/events/bulk',
    summary: `Up to ${AGENT_BULK_EVENTS_MAX} events in one call, each judged like process_event`,
    description:
      `Sends 1 to ${AGENT_BULK_EVENTS_MAX} events (each shaped like process_event's body) through the same ` +
      'pipeline, in order: identical items see each other, so a cooldown or cap lets only the first pass. The ' +
      'call fails with 400 only when the list or an item is malformed; otherwise every item gets its own ' +
      'result at its position — the event answer, or {success:false, index, code, status, error} (403 for a ' +
      'brand this key does not act for, 429 for a cooldown…). `processed` and `failed` count them.',
    access: 'key',
    request: {
      body: z.object({
        events: z
          .array(processEventBody)
          .min(1, 'events must contain at least 1 event')
          .max(AGENT_BULK_EVENTS_MAX, `events must contain at most ${AGENT_BULK_EVENTS_MAX} events`),
      }),
    },
    result: resultSchema,
    example: (fixture) => ({
      body: {
        events: [
          { brandId: fixture.brandId, eventId: fixture.eventId, userId: freshExampleUser('bulk') },
          { brandId: fixture.brandId, eventId: fixture.eventId, userId: freshExampleUser('bulk') },
        ],
      },
    }),
    async handle({ body }, context) {
      if (!context.principal) throw new AppError('UNAUTHORIZED', 'Sending events needs an agent key (X-PTS-Agent-Key)');
      const events = d.events;
      // As the event API's bulk route: prepared in order, queued together (one batch where possible), then
      // their mints awaited together.
      const prepared: (EventCandidate | BulkEventFailure)[] = [];
      for (const [index, item] of body.events.entries()) {
        try {
          const input = await toEventRequest(d, item, context.principal);
          prepared.push(await events.prepareEvent(input, agentEventContext(context.principal)));
        } catch (error) {
          if (!isAppError(error)) throw error;
          prepared.push(bulkEventFailure(index, error));
        }
      }
      return events.settleBulkEvents(prepared);
    },
  });
}
