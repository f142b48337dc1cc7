import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildSdk, SDK_VERSION } from '../build.ts';

describe('the built sdk.js', () => {
  it('is one self-contained script of at most 8 KB gzipped', async () => {
    const code = await buildSdk();
    const gzipped = gzipSync(code, { level: 9 }).length;
    expect(gzipped).toBeLessThanOrEqual(8 * 1024);
    // No module syntax and nothing loaded from elsewhere: a classic script a page includes with one tag.
    expect(code).not.toMatch(/\bimport\s*[({"'a-zA-Z*]|\brequire\(|\bexport\s/);
    expect(code).toContain(`pts sdk ${SDK_VERSION}`);
    expect(() => new Function(code)).not.toThrow();
  });

  it('builds the same bytes every time (so its ETag is stable across restarts and replicas)', async () => {
    expect(await buildSdk()).toBe(await buildSdk());
  });
});
