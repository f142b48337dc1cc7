import { z } from 'zod';
import type { AgentTool } from '../agent-tool.ts';
import { argumentDoc } from './tool-argument-docs.ts';

/** A JSON Schema object as MCP `tools/list` and the chat-completions planner read it. */
export interface JsonObjectSchema {
  type: 'object';
  properties: Record<string, unknown>;
  required?: string[];
  additionalProperties?: boolean;
  [key: string]: unknown;
}

type Piece = 'params' | 'query' | 'body';
const PIECES: Piece[] = ['params', 'query', 'body'];

/** The input side of one zod schema as JSON Schema (transforms and refinements cannot be expressed: `{}`). */
function inputJsonSchema(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}

/** The property names a piece's schema accepts, or undefined when it is not an object with known keys. */
function propertiesOf(schema: z.ZodType): string[] | undefined {
  const json = inputJsonSchema(schema);
  const properties = json.properties as Record<string, unknown> | undefined;
  return properties ? Object.keys(properties) : undefined;
}

/**
 * One flat object schema for a tool: its path params, query and body merged (spec: the MCP tool's input is
 * `params ∪ query ∪ body`). A name present in two pieces is one property, given to both.
 */
export function toolInputJsonSchema(tool: AgentTool): JsonObjectSchema {
  const properties: Record<string, unknown> = {};
  const required = new Set<string>();
  const request = tool.definition.request ?? {};
  for (const piece of PIECES) {
    const schema = request[piece];
    if (!schema) continue;
    const json = inputJsonSchema(schema);
    for (const [name, property] of Object.entries((json.properties as Record<string, unknown>) ?? {})) {
      const { $schema: _ignored, ...rest } = property as Record<string, unknown>;
      properties[name] = documented(tool.name, name, rest);
    }
    for (const name of (json.required as string[] | undefined) ?? []) required.add(name);
  }
  return {
    type: 'object',
    properties,
    ...(required.size > 0 ? { required: [...required] } : {}),
  };
}

/** A property with the argument's meaning and closed set of values (tool-argument-docs.ts) where it has none. */
function documented(tool: string, name: string, property: Record<string, unknown>): Record<string, unknown> {
  const doc = argumentDoc(tool, name);
  if (!doc) return property;
  return {
    ...property,
    ...(property.description === undefined ? { description: doc.description } : {}),
    ...(doc.enum && property.enum === undefined && property.type === 'string' ? { enum: [...doc.enum] } : {}),
  };
}

/** A tool's input schema with every property documented (tool-argument-docs.ts) where it says nothing. */
export function documentInputSchema(tool: string, schema: JsonObjectSchema): JsonObjectSchema {
  const properties = Object.fromEntries(
    Object.entries(schema.properties).map(([name, property]) => [
      name,
      documented(tool, name, property as Record<string, unknown>),
    ]),
  );
  return { ...schema, properties };
}

/**
 * Splits flat arguments (an MCP call, a converse plan step) back into `{params, query, body}` by the names
 * each piece declares, so `invokeAgentTool` validates them with the tool's own schemas — the only validation.
 */
export function splitToolArguments(
  tool: AgentTool,
  args: Record<string, unknown>,
): { params?: unknown; query?: unknown; body?: unknown } {
  const request = tool.definition.request ?? {};
  const split: { params?: unknown; query?: unknown; body?: unknown } = {};
  for (const piece of PIECES) {
    const schema = request[piece];
    if (!schema) continue;
    const names = propertiesOf(schema);
    if (!names) {
      split[piece] = args;
      continue;
    }
    const part: Record<string, unknown> = {};
    for (const name of names) if (args[name] !== undefined) part[name] = args[name];
    split[piece] = part;
  }
  return split;
}
