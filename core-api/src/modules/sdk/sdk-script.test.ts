import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createSdkScriptSource } from './sdk-script.ts';

describe('sdk script source', () => {
  it('builds once and serves the same bytes and ETags to every caller', async () => {
    let builds = 0;
    const source = createSdkScriptSource(async () => {
      builds += 1;
      return 'console.log("pts");';
    });
    const [first, second] = await Promise.all([source.load(), source.load()]);
    expect(builds).toBe(1);
    expect(second).toBe(first);
    expect(first.code.toString()).toBe('console.log("pts");');
    expect(gunzipSync(first.gzip).equals(first.code)).toBe(true);
    expect(first.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(first.gzipEtag).toBe(`${first.etag.slice(0, -1)}-gz"`);
    // The tag depends on the bytes only: every replica and restart serving this build agrees.
    const again = await createSdkScriptSource(async () => 'console.log("pts");').load();
    expect(again.etag).toBe(first.etag);
    const other = await createSdkScriptSource(async () => 'console.log("pts 2");').load();
    expect(other.etag).not.toBe(first.etag);
  });

  it('does not keep a failed build: the next request builds again', async () => {
    let builds = 0;
    const source = createSdkScriptSource(async () => {
      builds += 1;
      if (builds === 1) throw new Error('esbuild is missing');
      return 'ok();';
    });
    await expect(source.load()).rejects.toThrow('esbuild is missing');
    expect((await source.load()).code.toString()).toBe('ok();');
    expect(builds).toBe(2);
  });
});
