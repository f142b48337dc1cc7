import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObjectSchema } from './tool-arguments.ts';
import type { ToolFailure } from './tool-errors.ts';

/**
 * One tool as the MCP server lists and calls it: a JSON Schema for `tools/list` and a call that always
 * answers a CallToolResult (failures are `isError` content, never protocol errors, so the model reads them).
 */
export interface McpToolEntry {
  name: string;
  description: string;
  inputSchema: JsonObjectSchema;
  /** What the tool does to the world, for the host's confirmation rules (tool-annotations.ts). */
  annotations?: ToolAnnotations;
  call(args: Record<string, unknown>): Promise<CallToolResult>;
}

/** A tool's answer as JSON text content (bigints as strings, the way the REST envelope writes them). */
export function jsonResult(data: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(data ?? null, bigintReplacer) }] };
}

/** A failure as `isError` content: `{error: {code, status, message, reason?, details?}}` (spec 2 §7 codes). */
export function errorResult(failure: ToolFailure): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: failure }, bigintReplacer) }] };
}

function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
