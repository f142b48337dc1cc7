import type { Clock } from '@pts/shared';
import type { Logger } from 'pino';
import { type AgentPrincipal, type AgentTool, type AgentToolContext, invokeAgentTool } from '../agent-tool.ts';
import { splitToolArguments } from '../mcp/tool-arguments.ts';
import { type ToolFailure, toolFailureOf } from '../mcp/tool-errors.ts';
import type { ChatModel } from './chat-model.ts';
import type { ConverseReads, MentionedBrand } from './converse.repository.ts';
import { planWithModel } from './llm-planner.ts';
import { type PlanStep, planOffline } from './offline-planner.ts';

export interface ConverseDeps {
  reads: ConverseReads;
  clock: Clock;
  logger: Logger;
  /** The model of PTS_LLM_*, or undefined (offline). */
  model: ChatModel | undefined;
  /** Every agent tool; converse plans over the read tools among them. */
  listTools(): AgentTool[];
}

export type StepOutcome = { tool: string; ok: true; data: unknown } | { tool: string; ok: false; error: ToolFailure };

export interface ConverseResult {
  answer: string;
  plan: PlanStep[];
  steps: StepOutcome[];
  planner: 'offline' | 'llm';
  basis: {
    at: string;
    planner: 'offline' | 'llm';
    model: string | null;
    toolsAvailable: number;
    brandsRecognised: MentionedBrand[];
    stepsSucceeded: number;
    stepsFailed: number;
    /** Why the model did not plan or write although configured (the offline path answered). */
    fallback: string | null;
    notes: string[];
  };
}

/** Access levels a read step may have: converse never runs a tool the key could not call itself. */
const READ_ACCESS = new Set(['public', 'optional', 'key']);

/**
 * The tools converse may plan: reads only (GET) that the caller's key may call, never converse itself. A
 * question in natural language never spends, mints or changes a program by misunderstanding (decision in
 * docs/decisions.md ("Agent API", "converse and the MCP server")).
 */
export function plannableTools(tools: AgentTool[], principal: AgentPrincipal | undefined): AgentTool[] {
  return tools.filter(
    (tool) =>
      tool.definition.method === 'get' &&
      tool.name !== 'converse' &&
      READ_ACCESS.has(tool.definition.access) &&
      (tool.definition.access !== 'key' || principal !== undefined),
  );
}

/** One planned step through `invokeAgentTool` with the caller's principal: a failure is reported, not thrown. */
async function runStep(
  deps: ConverseDeps,
  tool: AgentTool | undefined,
  step: PlanStep,
  context: AgentToolContext,
): Promise<StepOutcome> {
  if (!tool) return { tool: step.tool, ok: false, error: { code: 'not_found', status: 404, message: 'No such tool' } };
  try {
    const data = await invokeAgentTool(tool, splitToolArguments(tool, step.input), context);
    return { tool: step.tool, ok: true, data };
  } catch (error) {
    const failure = toolFailureOf(error);
    if (failure.status >= 500) deps.logger.error({ err: error, tool: step.tool }, 'converse step failed');
    return { tool: step.tool, ok: false, error: failure };
  }
}

/**
 * `POST /converse`: plan (model or offline rules), execute each step through `invokeAgentTool` with the
 * caller's principal (a failed step is reported, not fatal), synthesize an answer citing the tools used.
 */
export async function converse(deps: ConverseDeps, query: string, context: AgentToolContext): Promise<ConverseResult> {
  const tools = plannableTools(deps.listTools(), context.principal);
  const brands = await deps.reads.findMentionedBrands(query);
  const keyBrandIds = context.principal?.brandIds ?? [];
  const notes: string[] = [];
  let planner: 'offline' | 'llm' = 'offline';
  let fallback: string | null = null;
  let plan: PlanStep[] | undefined;

  if (deps.model) {
    try {
      plan = await planWithModel(deps.model, { question: query, tools, brands, keyBrandIds });
      planner = 'llm';
    } catch (error) {
      fallback = `The model's plan was not usable (${error instanceof Error ? error.message : 'unknown error'}); the offline planner answered.`;
      deps.logger.warn({ reason: fallback }, 'converse: model plan refused');
    }
  }
  if (!plan) {
    const offline = planOffline({ question: query, tools, brands, keyBrandIds });
    plan = offline.steps;
    notes.push(...offline.notes);
  }

  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const steps = await Promise.all(plan.map((step) => runStep(deps, byName.get(step.tool), step, context)));

  let answer: string | undefined;
  if (planner === 'llm' && deps.model) {
    try {
      answer = await writeWithModel(deps.model, query, steps);
    } catch (error) {
      fallback = `The model could not write the answer (${error instanceof Error ? error.message : 'unknown error'}); the offline summary answered.`;
      deps.logger.warn({ reason: fallback }, 'converse: model answer failed');
    }
  }
  answer ??= summarize(steps, notes, fallback);

  return {
    answer,
    plan,
    steps,
    planner,
    basis: {
      at: deps.clock.now().toISOString(),
      planner,
      model: planner === 'llm' && deps.model ? deps.model.model : null,
      toolsAvailable: tools.length,
      brandsRecognised: brands,
      stepsSucceeded: steps.filter((step) => step.ok).length,
      stepsFailed: steps.filter((step) => !step.ok).length,
      fallback,
      notes,
    },
  };
}

/** Longest JSON of one step's data shown to the model: answers stay within a small context. */
const MAX_STEP_JSON = 6000;

async function writeWithModel(model: ChatModel, query: string, steps: StepOutcome[]): Promise<string> {
  const results = steps.map((step) => ({
    tool: step.tool,
    ...(step.ok ? { data: JSON.stringify(step.data).slice(0, MAX_STEP_JSON) } : { error: step.error }),
  }));
  const text = await model.complete([
    {
      role: 'system',
      content:
        'Answer the question from these pts agent API results only. Cite each tool you use as [tool_name]. ' +
        'Say plainly when a result is empty or a call failed; never invent numbers.',
    },
    { role: 'user', content: `Question: ${query}\nResults: ${JSON.stringify(results)}` },
  ]);
  if (!text.trim()) throw new Error('empty answer');
  return text.trim();
}

/**
 * The offline answer: one line per step citing its tool — what it returned (its scalar fields, the size
 * and first items of its lists) or why it failed — then the planner's notes.
 */
export function summarize(steps: StepOutcome[], notes: string[], fallback: string | null): string {
  const lines: string[] = [];
  if (fallback) lines.push(fallback);
  if (steps.length === 0) lines.push('No tool was called for this question.');
  for (const step of steps) {
    lines.push(
      step.ok
        ? `[${step.tool}] ${describe(step.data)}`
        : `[${step.tool}] failed: ${step.error.message} (${step.error.code}).`,
    );
  }
  lines.push(...notes);
  return lines.join('\n');
}

const MAX_FIELDS = 8;

function describe(data: unknown): string {
  if (data === null || data === undefined) return 'returned nothing.';
  if (Array.isArray(data)) return `${describeList(data)}.`;
  if (typeof data !== 'object') return `${String(data)}.`;
  const parts: string[] = [];
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (parts.length >= MAX_FIELDS) break;
    if (value === null || ['string', 'number', 'boolean', 'bigint'].includes(typeof value)) {
      parts.push(`${key}: ${String(value)}`);
    } else if (Array.isArray(value)) {
      parts.push(`${key}: ${describeList(value)}`);
    } else if (typeof value === 'object') {
      const scalars = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
        .slice(0, 4)
        .map(([k, v]) => `${k} ${String(v)}`);
      if (scalars.length > 0) parts.push(`${key}: ${scalars.join(', ')}`);
    }
  }
  return parts.length > 0 ? `${parts.join('; ')}.` : 'returned an empty object.';
}

function describeList(list: unknown[]): string {
  if (list.length === 0) return 'none';
  const names = list
    .slice(0, 3)
    .map((item) => {
      if (item === null || typeof item !== 'object') return String(item);
      const record = item as Record<string, unknown>;
      const label =
        record.name ??
        record.title ??
        record.eventType ??
        record.archetype ??
        record.username ??
        record.userIdentifier ??
        record.brandId ??
        record.perkId;
      return String(label ?? record.id ?? record.userId ?? '…');
    })
    .join(', ');
  return `${list.length} (${names}${list.length > 3 ? ', …' : ''})`;
}
