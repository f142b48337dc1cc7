import { z } from 'zod';
import { type AgentTool, defineAgentTool } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';
import type { ChatModel } from '../converse/chat-model.ts';
import { converse } from '../converse/converse.service.ts';

const failureSchema = z.object({
  code: z.string(),
  status: z.number().int(),
  message: z.string(),
  reason: z.string().optional(),
  details: z.unknown().optional(),
});

/** The shape of `POST /converse`'s `data`. */
export const converseResultSchema = z.object({
  answer: z.string(),
  plan: z.array(z.object({ tool: z.string(), input: z.record(z.string(), z.unknown()) })),
  steps: z.array(
    z.union([
      z.object({ tool: z.string(), ok: z.literal(true), data: z.unknown() }),
      z.object({ tool: z.string(), ok: z.literal(false), error: failureSchema }),
    ]),
  ),
  planner: z.enum(['offline', 'llm']),
  basis: z.object({
    at: z.string(),
    planner: z.enum(['offline', 'llm']),
    model: z.string().nullable(),
    toolsAvailable: z.number().int(),
    brandsRecognised: z.array(z.object({ brandId: z.string(), name: z.string(), domain: z.string() })),
    stepsSucceeded: z.number().int(),
    stepsFailed: z.number().int(),
    fallback: z.string().nullable(),
    notes: z.array(z.string()),
  }),
});

/**
 * The natural-language tool (spec 4.1 `POST /converse`). `listTools` returns the whole tool list (agent-tools.ts
 * passes it, so converse plans over every other area's tools without importing them); `options.model`
 * replaces the PTS_LLM_* model (tests).
 */
export function converseTools(
  d: Pick<AgentToolDeps, 'chatModel' | 'converseReads'>,
  listTools: () => AgentTool[],
  options: { model?: ChatModel } = {},
): AgentTool[] {
  const model = options.model ?? d.chatModel;
  return [
    defineAgentTool({
      name: 'converse',
      method: 'post',
      path: '/converse',
      summary: 'Answer a natural-language question by planning and running read tools',
      description:
        'Ask about brands, perks, balances, health, trending, leaderboards or comparisons in plain language. ' +
        'The question is planned into calls of the read-only agent tools (never events, redemptions or ' +
        'program changes), each call is run with your key, and `answer` cites the tools used as [tool_name]. ' +
        '`plan` lists the calls, `steps` their results (a failed step has `ok: false` and an error, the others ' +
        'still answer), `planner` says whether the configured model or the offline rules planned. Name brands ' +
        'by name, domain or address and users by their email-shaped id. Needs a pro or enterprise key.',
      access: 'converse',
      request: {
        body: z.object({
          query: z.string().trim().min(1, 'query must not be empty').max(1000, 'query is at most 1000 characters'),
        }),
      },
      result: converseResultSchema,
      example: (fixture) => ({ body: { query: `How healthy is brand ${fixture.brandId}?` } }),
      handle: (input, context) =>
        converse(
          { reads: d.converseReads, clock: context.clock, logger: context.logger, model, listTools },
          input.body.query,
          context,
        ),
    }),
  ];
}
