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
