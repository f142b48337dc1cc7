import { z } from 'zod';
import type { AgentTool } from '../agent-tool.ts';
import { splitToolArguments, toolInputJsonSchema } from '../mcp/tool-arguments.ts';
import type { ChatModel } from './chat-model.ts';
import type { MentionedBrand } from './converse.repository.ts';
import { MAX_PLAN_STEPS, type PlanStep } from './offline-planner.ts';

const planSchema = z.object({
  calls: z
    .array(z.object({ tool: z.string().min(1), arguments: z.record(z.string(), z.unknown()).default({}) }))
    .max(MAX_PLAN_STEPS),
});

/** Why a model's plan was refused; the offline planner answers instead and the answer says so. */
export class InvalidPlanError extends Error {
  override readonly name = 'InvalidPlanError';
}

/** The system prompt: the tools an AI may call, with their JSON Schemas, and the answer format. */
function planningPrompt(tools: AgentTool[], brands: MentionedBrand[], keyBrandIds: string[]): string {
  const catalogue = tools.map((tool) => ({
    name: tool.name,
    description: tool.definition.description,
    input: toolInputJsonSchema(tool),
  }));
  return [
    'You plan calls to the pts loyalty-rewards agent API to answer a question.',
    `Answer with one JSON object only: {"calls":[{"tool":"<name>","arguments":{...}}]} with at most ${MAX_PLAN_STEPS} calls,`,
    'using only these tools and arguments that fit their JSON Schema. An empty list means no tool can answer.',
    `Tools: ${JSON.stringify(catalogue)}`,
    `Brands named in the question (brandId is the address): ${JSON.stringify(brands)}`,
    `Brands of the caller's key: ${JSON.stringify(keyBrandIds)}`,
  ].join('\n');
}

/** Pulls the JSON object out of the model's text (some models wrap it in a ```json fence). */
function jsonOf(text: string): unknown {
  const fenced = text.match(/```(?:json)?\s*([\s\S]*?)```/);
  const candidate = (fenced?.[1] ?? text).trim();
  try {
    return JSON.parse(candidate);
  } catch {
    throw new InvalidPlanError('the model did not answer with JSON');
  }
}

/** Checks each call's arguments with the tool's own schemas, without running it. */
function validateArguments(tool: AgentTool, args: Record<string, unknown>): string | undefined {
  const split = splitToolArguments(tool, args);
  const request = tool.definition.request ?? {};
  for (const piece of ['params', 'query', 'body'] as const) {
    const schema = request[piece];
    if (!schema) continue;
    const result = schema.safeParse(split[piece] ?? {});
    if (!result.success) {
      const issue = result.error.issues[0];
      return `${tool.name}: ${issue?.path.join('.') || piece}: ${issue?.message ?? 'invalid'}`;
    }
  }
  const known = toolInputJsonSchema(tool).properties;
  const unknown = Object.keys(args).filter((name) => !(name in known));
  if (unknown.length > 0) return `${tool.name}: unknown argument ${unknown.join(', ')}`;
  return undefined;
}

/**
 * Asks the model for a plan over `tools` and validates it: JSON of the agreed shape, known tool names (of
 * the list the caller may use), arguments accepted by each tool's schemas. Anything else throws
 * InvalidPlanError (or the model's own ChatModelError) and the caller falls back to the offline planner.
 */
export async function planWithModel(
  model: ChatModel,
  input: { question: string; tools: AgentTool[]; brands: MentionedBrand[]; keyBrandIds: string[] },
): Promise<PlanStep[]> {
  const text = await model.complete(
    [
      { role: 'system', content: planningPrompt(input.tools, input.brands, input.keyBrandIds) },
      { role: 'user', content: input.question },
    ],
    { json: true },
  );
  const parsed = planSchema.safeParse(jsonOf(text));
  if (!parsed.success) {
    throw new InvalidPlanError(`the plan is not {"calls":[{tool, arguments}]} with at most ${MAX_PLAN_STEPS} calls`);
  }
  const byName = new Map(input.tools.map((tool) => [tool.name, tool]));
  return parsed.data.calls.map((call) => {
    const tool = byName.get(call.tool);
    if (!tool) throw new InvalidPlanError(`the plan calls ${call.tool}, which is not an available tool`);
    const problem = validateArguments(tool, call.arguments);
    if (problem) throw new InvalidPlanError(`invalid arguments: ${problem}`);
    return { tool: tool.name, input: call.arguments };
  });
}
