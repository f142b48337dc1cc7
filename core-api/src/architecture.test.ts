import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The layout's rules, checked on the source itself (docs/architecture.md): modules never reach back into the
// composition root, no two files or feature folders import each other in a circle, and routers, agent tools
// and jobs get the named services they use, never the whole container, and never query the database.

const SRC = dirname(fileURLToPath(import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'artifacts' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [relative(SRC, path)] : [];
  });
}

const files = sourceFiles(SRC);
const texts = new Map(files.map((file) => [file, readFileSync(join(SRC, file), 'utf8')]));
const known = new Set(files);
const imports = new Map(
  files.map((file) => {
    const text = texts.get(file) as string;
    const targets = [...text.matchAll(/from '(\.[^']+)'/g)]
      .map((match) => normalize(join(dirname(file), match[1] as string)))
      .filter((target) => known.has(target));
    return [file, targets] as const;
  }),
);

/** `modules/<feature>` for files of a feature, else the top folder (or the file at the root). */
const folderOf = (file: string) => {
  const parts = file.split('/');
  return parts[0] === 'modules' ? parts.slice(0, 2).join('/') : ((parts.length > 1 ? parts[0] : file) as string);
};

/** Strongly connected components with more than one member: the cycles of a graph. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('core-api layout', () => {
  it('has no import cycle between files', () => {
    const graph = new Map(files.map((file) => [file, new Set(imports.get(file))]));
    expect(cycles(graph)).toEqual([]);
  });

  it('has no import cycle between feature folders (or top-level folders)', () => {
    const graph = new Map<string, Set<string>>();
    for (const [file, targets] of imports) {
      const from = folderOf(file);
      for (const target of targets) {
        const to = folderOf(target);
        if (to !== from) graph.set(from, (graph.get(from) ?? new Set()).add(to));
      }
    }
    expect(cycles(graph)).toEqual([]);
  });

  it('keeps modules out of the composition root: no module imports deps.ts, compose.ts or app.ts', () => {
    const reaching = [...imports]
      .filter(([file]) => file.startsWith('modules/'))
      .flatMap(([file, targets]) =>
        targets.filter((t) => ['deps.ts', 'compose.ts', 'app.ts'].includes(t)).map((t) => `${file} → ${t}`),
      );
    expect(reaching).toEqual([]);
  });

  it('lets only the composition root hold the whole container: deps.ts and compose.ts are imported by it alone', () => {
    const root = ['app.ts', 'compose.ts', 'main.ts', 'startup/platform.ts'];
    const reaching = [...imports]
      .filter(([file]) => !root.includes(file))
      .flatMap(([file, targets]) =>
        targets.filter((t) => ['deps.ts', 'compose.ts'].includes(t)).map((t) => `${file} → ${t}`),
      );
    expect(reaching).toEqual([]);
  });

  it('keeps queries out of routers, agent tools and jobs: SQL lives in the services and repositories they call', () => {
    const edge = files.filter((file) => EDGE_FILE.test(file));
    expect(edge.length).toBeGreaterThan(40);
    const querying = edge.flatMap((file) =>
      (texts.get(file) as string)
        .split('\n')
        .map((line, index) => [line, index + 1] as const)
        .filter(([line]) => QUERY.test(line))
        .map(([line, number]) => `${file}:${number}: ${line.trim()}`),
    );
    expect(querying).toEqual([]);
  });

  it('gives no router, agent tool or job the database handle: they get the named services they use', () => {
    const holding = files.filter((file) => EDGE_FILE.test(file) && DB_HANDLE.test(texts.get(file) as string));
    expect(holding).toEqual([]);
  });

  it('hands routers, agent tools and jobs no type that holds the handle: never EventDeps, the event service instead', () => {
    // EventDeps is the event pipeline's parts (the handle among them) for the services that reward; the edges
    // get EventService (modules/events/events.service.ts). Any other imported type holding `db: Database`, in
    // a field or through a type it names, would hand an edge the handle just the same.
    expect([...HANDLE_TYPES]).toEqual(expect.arrayContaining(['EventDeps', 'AppDeps', 'AgentServiceDeps']));
    const naming = files
      .filter((file) => EDGE_FILE.test(file))
      .flatMap((file) => {
        const text = texts.get(file) as string;
        const imported = importedNames(text);
        return [...new Set(['EventDeps', ...HANDLE_TYPES])]
          .filter((name) => imported.has(name) || (name === 'EventDeps' && /\bEventDeps\b/.test(text)))
          .map((name) => `${file}: ${name}`);
      });
    expect(naming).toEqual([]);
  });

  it("makes every reward through the event service's one entry: no other module holds the pipeline's parts", () => {
    // Issue 34 §3: drops, streaks, members' manual awards, compat and agent rewards depend on EventService and
    // call its `award`; EventDeps (the handle, the batcher) is built over in compose.ts alone, and only the
    // event service's `award` hands the batcher a candidate.
    const outside = files.filter((file) => !file.startsWith('modules/events/'));
    const parts = /\b(EventDeps|EventBatcher|EventBatcherDeps|createEventBatcher|createConfiguredEventBatcher)\b/;
    const holdingParts = outside
      .filter((file) => file !== 'compose.ts' && parts.test(texts.get(file) as string))
      .map((file) => `${file}: ${(texts.get(file) as string).match(parts)?.[1]}`);
    expect(holdingParts).toEqual([]);
    // From the event service a module imports types, names and pure helpers: never a verb that makes a reward.
    const values = outside.flatMap((file) =>
      [...(texts.get(file) as string).matchAll(/import\s+\{([^}]*)\}\s*from\s+'[^']*events\/events\.service\.ts'/g)]
        .flatMap((match) => (match[1] as string).split(','))
        .map((part) => part.trim())
        .filter((part) => part !== '' && !part.startsWith('type '))
        .filter(
          (name) =>
            !EVENT_SERVICE_PURE_EXPORTS.includes(name) && !(file === 'compose.ts' && name === 'createEventService'),
        )
        .map((name) => `${file}: ${name}`),
    );
    expect(values).toEqual([]);
    const enqueuing = files.flatMap((file) =>
      (texts.get(file) as string)
        .split('\n')
        .map((line, index) => [line, index + 1] as const)
        .filter(([line]) => /batcher\.enqueue\(/.test(line))
        .map(([, number]) => `${file}:${number}`),
    );
    expect(enqueuing).toHaveLength(1);
    expect(enqueuing[0]).toMatch(/^modules\/events\/events\.service\.ts:/);
    const service = texts.get('modules/events/events.service.ts') as string;
    const enqueueLine = Number((enqueuing[0] as string).split(':')[1]);
    const before = service.split('\n').slice(0, enqueueLine).reverse();
    expect(before.find((line) => /^(export )?(async )?function /.test(line))).toMatch(/function award\(/);
  });

  it("lets the simulator replay with the event path's own judge: it imports the pure steps and decides no rule itself", () => {
    // Issue 36 §3: replaying past events under unchanged rules must reproduce what was issued, so the replay calls
    // the very functions the live path calls (event-rules.ts) and only keeps the state they read.
    const replay = texts.get('modules/simulator/simulator-replay.ts') as string;
    const judgeImport = replay.match(/import\s+\{([^}]*)\}\s*from\s+'\.\.\/events\/event-rules\.ts'/)?.[1] ?? '';
    const imported = judgeImport.split(',').map((part) => part.trim().replace(/^type\s+/, ''));
    for (const step of [
      'ruleRewardOf',
      'campaignRewardOf',
      'heldTierReward',
      'skipsCooldown',
      'judgeEvent',
      'judgeCampaignLimit',
    ]) {
      expect(imported, `simulator-replay.ts imports ${step} from event-rules.ts`).toContain(step);
    }
    // No reward arithmetic or limit of its own: rates, multipliers, rounding, cooldowns and claim limits are the judge's.
    const ruleLogic =
      /\brateReward\(|\btierReward\(|\brateTermsOf\(|Math\.(round|floor|ceil)\(|cooldown_hours\s*\*|\bisUnlimited\(|claims\s*(>=|<)\s*\w|multiplierHundredths\s*\)/;
    const simulatorFiles = files.filter((file) => file.startsWith('modules/simulator/'));
    expect(simulatorFiles.length).toBeGreaterThan(0);
    const deciding = simulatorFiles.flatMap((file) =>
      (texts.get(file) as string)
        .split('\n')
        .map((line, index) => [line, index + 1] as const)
        .filter(([line]) => ruleLogic.test(line))
        .map(([line, number]) => `${file}:${number}: ${line.trim()}`),
    );
    expect(deciding).toEqual([]);
  });

  it('lets startup/platform.ts build nothing: it opens, starts, listens and stops what compose.ts builds', () => {
    // Issue 34 §3: the minter, the reconciler, the relayer, the chain reads, the change notifier and the updates
    // that run when a mint confirms are built in compose.ts; platform.ts calls no builder of a part.
    const text = texts.get('startup/platform.ts') as string;
    const building = [...text.matchAll(/\b(create\w+|follow\w+|notify\w+|record\w+)\(/g)]
      .map((match) => match[1] as string)
      .filter((name) => !PLATFORM_MAY_CREATE.includes(name));
    expect([...new Set(building)]).toEqual([]);
  });

  it('lets app.ts only mount: it never names the database handle (compose.ts builds every service over it)', () => {
    const naming = (texts.get('app.ts') as string)
      .split('\n')
      .map((line, index) => [line, index + 1] as const)
      .filter(([line]) => /\bdb\b|\bDatabase\b|Kysely/.test(line))
      .map(([line, number]) => `app.ts:${number}: ${line.trim()}`);
    expect(naming).toEqual([]);
  });

  it('hands the agent surface no database handle: its tools and its REST and MCP routers import none', () => {
    const agentEdge = files.filter(
      (file) => /^agent\/tools\/.*\.tools\.ts$/.test(file) || AGENT_ROUTERS.includes(file),
    );
    expect(agentEdge.length).toBeGreaterThan(10);
    const holding = agentEdge.flatMap((file) =>
      (imports.get(file) ?? []).filter((t) => t === 'db/database.ts').map((t) => `${file} → ${t}`),
    );
    expect(holding).toEqual([]);
  });

  it('leaves money read models to the modules: agent/ never sums events.reward_amount or perk_redemptions.cost', () => {
    // The member ledger (modules/ledger) and brand analytics (modules/analytics) define earned, spent, balances,
    // pts issued and redeemed once (docs/ledger.md); the agent surface reads them there.
    const summing = /sum\s*\(\s*(?:\w+\s*\.\s*)?(?:reward_amount|cost)\b/i;
    const offending = files
      .filter((file) => file.startsWith('agent/'))
      .flatMap((file) =>
        readFileSync(join(SRC, file), 'utf8')
          .split('\n')
          .flatMap((line, index) => (summing.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
      );
    expect(offending).toEqual([]);
  });

  it('leaves the rule and money tables to their modules: agent/ never reads perk_redemptions, reward_mints or event_rules', () => {
    // Redemption counts and rates are modules/perks' and modules/analytics' (perk-activity.ts), issued pts and
    // mint states modules/ledger's (reward-mints.ts), event rules modules/events' (rule-reads.ts) and
    // modules/brands': one definition each, which every surface reads (issue 23 §1).
    const tables = /\b(perk_redemptions|reward_mints|event_rules)\b/;
    const offending = files
      .filter((file) => file.startsWith('agent/') && !AGENT_TABLE_READS_ALLOWED.includes(file))
      .flatMap((file) =>
        (texts.get(file) as string)
          .split('\n')
          .flatMap((line, index) => (tables.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
      );
    expect(offending).toEqual([]);
  });

  it('keeps functions in agent/ and chain/ short: no body over FUNCTION_LINES_MAX lines, the listed exceptions at most as long as now', () => {
    // Issue 34 §4: long closures are carved into small named steps (chain/mint/, agent/tools/<area>/). A body is
    // counted from its opening to its closing line, nested functions included (a factory's handler counts in it).
    const measured = files
      .filter((file) => file.startsWith('agent/') || file.startsWith('chain/'))
      .flatMap((file) => functionLengths(file, texts.get(file) as string));
    expect(measured.length).toBeGreaterThan(500);
    const over = measured.filter(({ key, lines }) => lines > (LONG_FUNCTIONS_ALLOWED[key] ?? FUNCTION_LINES_MAX));
    expect(over.map(({ key, lines }) => `${key}: ${lines} lines`)).toEqual([]);
    // An exception that was carved (or renamed) leaves the list with it.
    const stillLong = new Set(measured.filter(({ lines }) => lines > FUNCTION_LINES_MAX).map(({ key }) => key));
    expect(Object.keys(LONG_FUNCTIONS_ALLOWED).filter((key) => !stillLong.has(key))).toEqual([]);
  });

  it('hands no tool factory the whole AgentToolDeps: each takes the deps it uses (a Pick or its own type)', () => {
    // Issue 34 §4: a factory that receives all of AgentToolDeps can reach every service of the agent surface.
    const tools = files.filter((file) => file.startsWith('agent/tools/'));
    expect(tools.length).toBeGreaterThan(10);
    const whole = tools.flatMap((file) => wholeDepsReferences(file, texts.get(file) as string));
    expect(whole.filter((at) => !WHOLE_DEPS_ALLOWED.includes(at.split(':')[0] as string))).toEqual([]);
  });
});

/**
 * What startup/platform.ts may create itself: its own stop stack, the process's logger and metrics (needed
 * before anything is built), and the app over the composed services.
 */
const PLATFORM_MAY_CREATE = ['createApp', 'createLogger', 'createMetrics', 'createStopStack'];

/** What the event service exports besides its types that makes no reward: names, pure helpers and previews. */
const EVENT_SERVICE_PURE_EXPORTS = [
  'MANUAL_AWARD_EVENT_TYPE',
  'PLATFORM_LEDGER_ID',
  'bulkEventFailure',
  'judgeEventEligibility',
  'previewEarnings',
  'resolveEventDomain',
  'restateAward',
];

/**
 * agent/ files that may name those tables, each with its reason. None today: add one only with a reason a
 * reviewer accepts (a read no other surface has, and that no module could own).
 */
const AGENT_TABLE_READS_ALLOWED: string[] = [];

const AGENT_ROUTERS = ['agent/agent-tools.ts', 'agent/agent-router.ts', 'agent/mcp/mcp.routes.ts'];
/** Routers (`*.routes.ts`, `*.router.ts`, `*-router.ts`), agent tool files and background jobs. */
const EDGE_FILE = /(\.routes|\.router|-router|\.tools|\.job|\.worker)\.ts$|^agent\/agent-tools?\.ts$/;
/** A query written in place: kysely's builders, a transaction, or raw SQL. */
const QUERY = /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto|transaction)\(|\bsql(\.raw)?[`<(]/;

/**
 * Taking or passing on the raw database handle: any `….db` (`deps.db`, `d.events.db`), a `db: Database` or
 * `Kysely<DB>` field, a `{ db }` or `db,` pass.
 */
const DB_HANDLE = /\.db\b|\bdb: Database\b|Kysely<DB>|\{ db[,}]|\bdb,/;

/** The names a file imports (`import { a, type B as C }`: a and C), types and values alike. */
function importedNames(text: string): Set<string> {
  return new Set(
    [...text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from/g)].flatMap((match) =>
      // The last word of each part: `a`, `type B`, `type B as C`.
      (match[1] as string).split(',').flatMap((part) => part.match(/(\w+)\s*$/)?.[1] ?? []),
    ),
  );
}

/**
 * The exported types of core-api that hold the database handle: `Database` itself, and every interface or type
 * alias with a member or part of such a type (a `db: Database` field, `extends EventDeps`, `events: EventDeps`,
 * `Pick<AppDeps, …>`). Parameter lists are left out (a method taking a transaction holds no handle), and so
 * are comments. An interface's body runs to its closing `}` at the start of a line, an alias's to the next
 * line that starts a declaration.
 */
const HANDLE_TYPES: Set<string> = (() => {
  const declaration = /^export (?:interface|type) (\w+)[^\n]*?(?:\{\n[\s\S]*?\n\}|[^\n]*(?:\n[ \t)\]}|&][^\n]*)*)/gm;
  const words = new Map<string, Set<string>>();
  for (const text of texts.values()) {
    for (const match of text.matchAll(declaration)) {
      const name = match[1] as string;
      let body = match[0]
        .slice(match[0].indexOf(name) + name.length)
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/\/\/[^\n]*/g, '');
      for (let before = ''; before !== body; ) {
        before = body;
        body = body.replace(/\([^()]*\)/g, '');
      }
      words.set(name, new Set([...(words.get(name) ?? []), ...(body.match(/\w+/g) ?? [])]));
    }
  }
  const holding = new Set(['Database']);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [name, used] of words) {
      if (!holding.has(name) && [...holding].some((held) => used.has(held))) {
        holding.add(name);
        grew = true;
      }
    }
  }
  return holding;
})();

/** Lines a function's body may span in agent/ and chain/ (issue 34 §4). */
const FUNCTION_LINES_MAX = 60;

/**
 * Functions over the cap, each allowed at most its length today. None since issue 34 §4 carved the last ones
 * (the chain's factories hold their shared state in a small object handed to named steps: chain/mint/,
 * chain/relay/run.ts, chain/reconcile/). Keyed `file function` (an arrow or method by the property or variable
 * it is assigned to); an entry may only shrink, and a carved one must go.
 */
const LONG_FUNCTIONS_ALLOWED: Record<string, number> = {};

/** Tool files that may still take AgentToolDeps whole: none (each factory takes a Pick or its own type). */
const WHOLE_DEPS_ALLOWED: string[] = [];

/** Each function, method and arrow of a file with a body, as `file name` and the lines its body spans. */
function functionLengths(file: string, text: string): { key: string; lines: number }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: { key: string; lines: number }[] = [];
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line;
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const body = node.body as ts.Node;
      found.push({ key: `${file} ${nameOf(node)}`, lines: lineOf(body.getEnd()) - lineOf(body.getStart(source)) + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A function's name, or the property or variable it is assigned to, or `(anonymous)`. */
function nameOf(node: ts.Node): string {
  const named = (node as { name?: ts.Node }).name;
  if (named && ts.isIdentifier(named)) return named.text;
  const parent = node.parent;
  if ((ts.isPropertyAssignment(parent) || ts.isVariableDeclaration(parent)) && ts.isIdentifier(parent.name)) {
    return parent.name.text;
  }
  return '(anonymous)';
}

/**
 * Where a file names AgentToolDeps other than as the first argument of a `Pick<…>` (a parameter, an alias, an
 * intersection or `extends` would all hand over every field), as `file:line`.
 */
function wholeDepsReferences(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    const named = ts.isTypeReferenceNode(node) || ts.isExpressionWithTypeArguments(node);
    const name = ts.isTypeReferenceNode(node)
      ? node.typeName
      : ts.isExpressionWithTypeArguments(node)
        ? node.expression
        : undefined;
    if (named && name?.getText(source) === 'AgentToolDeps') {
      const parent = node.parent;
      const picked =
        ts.isTypeReferenceNode(parent) &&
        parent.typeName.getText(source) === 'Pick' &&
        parent.typeArguments?.[0] === node;
      if (!picked) found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
