import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const docsDir = join(import.meta.dirname, '..', '..', 'docs');

function markdownPages(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownPages(path);
    return name.endsWith('.md') ? [relative(docsDir, path)] : [];
  });
}

describe('docs/README.md', () => {
  it('links every page under docs/, so a newcomer finds each one from the index', () => {
    const index = readFileSync(join(docsDir, 'README.md'), 'utf8');
    const unlisted = markdownPages(docsDir)
      .filter((page) => page !== 'README.md')
      .filter((page) => !index.includes(`](${page})`));
    expect(unlisted).toEqual([]);
  });
});

describe('workspace READMEs', () => {
  it('gives every workspace (and the WordPress plugin) a README.md a newcomer lands on', () => {
    const root = join(import.meta.dirname, '..', '..');
    const { workspaces } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces: string[] };
    const missing = [...workspaces, 'cms-plugin'].filter((dir) => !existsSync(join(root, dir, 'README.md')));
    expect(missing).toEqual([]);
  });
});

describe('docs/architecture.md', () => {
  const root = join(import.meta.dirname, '..', '..');
  const page = readFileSync(join(docsDir, 'architecture.md'), 'utf8');
  const foldersIn = (dir: string) =>
    readdirSync(join(root, dir)).filter((name) => statSync(join(root, dir, name)).isDirectory());

  it('names every module folder, every chain and agent folder, and every workspace, as they are on disk', () => {
    const { workspaces } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces: string[] };
    const expected = [
      ...foldersIn('core-api/src/modules').map((name) => `modules/${name}`),
      ...foldersIn('core-api/src/chain').map((name) => `chain/${name}`),
      ...foldersIn('core-api/src/agent').map((name) => `agent/${name}`),
      ...workspaces.map((name) => `${name}/`),
      'cms-plugin/',
    ];
    // A whole name: `modules/perks` does not count for `modules/perks-x`, nor `chain/mint` inside `x/chain/mint`.
    const named = (path: string) =>
      new RegExp(`(^|[^\\w/-])${path.replace(/[-/]/g, '\\$&')}${path.endsWith('/') ? '' : '(?![\\w-])'}`, 'm').test(
        page,
      );
    expect(expected.filter((path) => !named(path))).toEqual([]);
  });
});
