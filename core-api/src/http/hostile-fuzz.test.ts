import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Answer,
  type DocumentedRoute,
  expectHandled,
  type HostileWorld,
  problemOf,
  startHostileWorld,
} from '../../test/hostile-routes.ts';
import { type JsonSchema, replaceAt } from '../../test/schema-values.ts';

// Issue 11 §3, the generated half: bodies of each route's shape with hostile leaves (fast-check), every MCP
// tool's arguments turned hostile, and hostile headers on every route (test/hostile-routes.ts has the routes
// and their credentials). Whatever comes in: never a 5xx, and every 4xx says what to fix.

let world: HostileWorld;
let mcp: DocumentedRoute;
let tools: { name: string; inputSchema: JsonSchema }[];

beforeAll(async () => {
  world = await startHostileWorld();
  mcp = world.routes.find((route) => route.template === '/mcp') as DocumentedRoute;
  const listed = await world.send(mcp, { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
  tools = (JSON.parse(listed.text) as { result: { tools: typeof tools } }).result.tools;
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

/** One MCP `tools/call` of `name` with `args`. */
function callTool(name: string, args: unknown, label: string): Promise<Answer> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
  return world.send(mcp, { body, label: `${label} ${name}:` });
}

describe('fuzzed input shaped by each route schema', { timeout: 300_000 }, () => {
  it('no route with a body answers 5xx to bodies of its shape with hostile leaves, and its 4xx say what to fix', async () => {
    const problems: string[] = [];
    let runs = 0;
    for (const route of world.jsonBodies()) {
      await fc.assert(
        fc.asyncProperty(world.values.arbitrary(route.body), async (body) => {
          runs++;
          const answer = await world.send(route, { body: JSON.stringify(body) ?? 'null', label: 'fuzz:' });
          const problem = problemOf(answer);
          if (problem) problems.push(`${problem}\n  body: ${JSON.stringify(body).slice(0, 300)}`);
        }),
        { numRuns: 20 },
      );
    }
    expect(runs).toBeGreaterThan(45 * 20);
    expect(problems).toEqual([]);
  });

  it('no route answers 5xx to query strings of its parameters with hostile values, several at once', async () => {
    const rawValue = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }).map(encodeURIComponent),
      fc.constantFrom('%ED%A0%80', '%00', '%FF', '9007199254740993', '-1', 'NaN', '1e309', '1.5', '', 'x'.repeat(3000)),
    );
    const problems: string[] = [];
    const routes = world.routes.filter((route) => route.parameters.some((p) => p.in === 'query'));
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) {
      const names = route.parameters.filter((p) => p.in === 'query').map((p) => p.name);
      // Each parameter: left valid, dropped, or one or more hostile values (a repeated name is an array).
      const valid = (name: string) => world.requiredQuery(route).find((pair) => pair.startsWith(`${name}=`));
      const pairs = fc.tuple(
        ...names.map((name) =>
          fc.oneof(
            fc.constant(valid(name) ? [valid(name) as string] : []),
            fc.array(rawValue, { minLength: 1, maxLength: 2 }).map((raws) => raws.map((raw) => `${name}=${raw}`)),
          ),
        ),
      );
      await fc.assert(
        fc.asyncProperty(pairs, async (chosen) => {
          const query = chosen.flat().join('&');
          const answer = await world.send(route, { pathWithQuery: `${world.pathOf(route)}?${query}`, label: 'fuzz:' });
          const problem = problemOf(answer);
          if (problem) problems.push(problem);
        }),
        { numRuns: 10 },
      );
    }
    expect(problems).toEqual([]);
  });

  it('every MCP tool with a wrong type or an out-of-range number in each argument: an isError result below 500', async () => {
    expect(tools.length).toBeGreaterThan(30);
    const answers: Answer[] = [];
    for (const tool of tools) {
      const valid = world.values.valid(tool.inputSchema) as Record<string, unknown>;
      answers.push(await callTool(tool.name, valid, 'valid'));
      for (const { path, kind } of world.values.positions(valid)) {
        const replacements =
          path.length === 0
            ? [null, 'x']
            : kind === 'number'
              ? ['1', 2 ** 63, 0.5]
              : kind === 'string'
                ? [1, {}, ['a', 'b']]
                : [null, 'x'];
        for (const replacement of replacements) {
          answers.push(
            await callTool(
              tool.name,
              replaceAt(valid, path, replacement),
              `${JSON.stringify(replacement)} at ${path.join('.')}`,
            ),
          );
        }
      }
    }
    expectHandled(answers);
  });

  it('every MCP tool with fuzzed arguments of its input schema: never a 5xx inside or out', async () => {
    const problems: string[] = [];
    for (const tool of tools) {
      await fc.assert(
        fc.asyncProperty(world.values.arbitrary(tool.inputSchema), async (args) => {
          const problem = problemOf(await callTool(tool.name, args, 'fuzz'));
          if (problem) problems.push(`${problem}\n  arguments: ${JSON.stringify(args).slice(0, 300)}`);
        }),
        { numRuns: 8 },
      );
    }
    expect(problems).toEqual([]);
  });

  it('hostile credentials and headers on every route: 4xx or an answer, never 5xx', async () => {
    const long = 'x'.repeat(4000);
    const variants: Record<string, string>[] = [
      { 'x-pts-timestamp': '9'.repeat(400) },
      { 'x-pts-timestamp': '1e309' },
      { 'x-pts-signature': long },
      { 'x-pts-agent-key': `ak_%00${long}` },
      { authorization: `Bearer ${long}` },
      { authorization: 'Basic Zm9vOmJhcg==' },
      { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' },
      { 'x-forwarded-for': 'garbage, ::ffff:999.1.1.1' },
      { 'content-type': 'application/json; charset="' },
      { origin: `https://${long}` },
    ];
    const answers = await world.sendEach(world.routes, () =>
      variants.map((headers) => ({ headers, label: `${Object.keys(headers)[0]}:` })),
    );
    expectHandled(answers);
  });
});
