import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
const SRC = process.argv[3] ?? '/work/wt-agentcarve/core-api/src';
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'artifacts' ? [] : files(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [p] : [];
  });
}
const cap = Number(process.argv[2] ?? 60);
const out: string[] = [];
for (const f of (process.argv[3] ? files(SRC) : [...files(join(SRC, 'agent')), ...files(join(SRC, 'chain'))])) {
  const text = readFileSync(f, 'utf8');
  const sf = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true);
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n) && (n as ts.FunctionLikeDeclaration).body) {
      const body = (n as ts.FunctionLikeDeclaration).body!;
      const a = sf.getLineAndCharacterOfPosition(body.getStart(sf)).line;
      const b = sf.getLineAndCharacterOfPosition(body.getEnd()).line;
      const len = b - a + 1;
      const name = (n as any).name?.getText?.(sf) ?? (ts.isPropertyAssignment(n.parent) ? n.parent.name.getText(sf) : ts.isVariableDeclaration(n.parent) ? n.parent.name.getText(sf) : '<anon>');
      if (len > cap) out.push(`${len}\t${relative(SRC, f)}:${a + 1} ${name}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
}
console.log(out.sort((x, y) => Number(y.split('\t')[0]) - Number(x.split('\t')[0])).join('\n'));
