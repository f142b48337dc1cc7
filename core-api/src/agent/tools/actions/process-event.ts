import { AppError, eventResponseSchema } from '@pts/shared';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import type { EventToolDeps } from './actions-tool-deps.ts';
import { agentEventContext, freshExampleUser, processEventBody, toEventRequest } from './event-requests.ts';

/** `process_event`: Reward a user for an event of a brand this key acts for. */
export function processEventTool(d: EventToolDeps): AgentTool {
  return defineAgentTool({
    name: 'process_event',
    method: 'post',
    path: '/events',
    summary: 'Reward a user for an event of a brand this key acts for',
    description:
      "Sends one event through the brand's rules, exactly as the event API does: the same cooldowns, per-user " +
      'and total caps and duplicate window hold, however many agents call at once. Name the rule by `eventType` ' +
      'or by its `eventId` (get_brand lists both). `userId` is the user as an email (or a platform identity ' +
      'such as discord_123@pts.example); a new user gets a wallet. `externalId` makes retries safe (the same ' +
      'one is rewarded once). The answer has the reward in pts, the wallet and the mint transaction (mintStatus ' +
      'pending when queued). Refusals: 429 while a cooldown or cap holds, 409 duplicate, 400 unknown event type, ' +
      '403 when the key does not act for the brand or claims a brand-only privilege (skip_cooldown, privileged ' +
      'sources, campaign rewards).',
    access: 'key',
    request: { body: processEventBody },
    result: eventResponseSchema,
    example: (fixture) => ({
      body: {
        brandId: fixture.brandId,
        eventId: fixture.eventId,
        userId: freshExampleUser('event'),
        metadata: { note: 'agent tool example' },
      },
    }),
    async handle({ body }, context) {
      const input = await toEventRequest(d, body, context.principal);
      if (!context.principal) throw new AppError('UNAUTHORIZED', 'Sending events needs an agent key (X-PTS-Agent-Key)');
      return d.events.recordEvent(input, agentEventContext(context.principal));
    },
  });
}
