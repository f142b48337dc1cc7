import { createManualClock } from '@pts/shared';
import { describe, expect, it } from 'vitest';
import { createKeyedCache } from './keyed-cache.ts';

describe('createKeyedCache', () => {
  const setup = () => {
    const clock = createManualClock(new Date('2026-11-26T00:00:00Z'));
    const cache = createKeyedCache<string>({ clock, ttlMs: 5_000 });
    let loads = 0;
    let value: string | undefined = 'v1';
    const load = async () => {
      loads += 1;
      return value;
    };
    return {
      clock,
      cache,
      load,
      loads: () => loads,
      set: (next: string | undefined) => {
        value = next;
      },
    };
  };

  it('reads once within the TTL and again after it', async () => {
    const t = setup();
    expect(await t.cache.get('k', t.load)).toBe('v1');
    t.set('v2');
    t.clock.advance(4_999);
    expect(await t.cache.get('k', t.load)).toBe('v1');
    expect(t.loads()).toBe(1);
    t.clock.advance(1);
    expect(await t.cache.get('k', t.load)).toBe('v2');
    expect(t.loads()).toBe(2);
  });

  it('never keeps an absent value: an unknown key is asked for every time', async () => {
    const t = setup();
    t.set(undefined);
    expect(await t.cache.get('nobody', t.load)).toBeUndefined();
    expect(await t.cache.get('nobody', t.load)).toBeUndefined();
    expect(t.loads()).toBe(2);
  });

  it('forgets one key or all at once', async () => {
    const t = setup();
    await t.cache.get('a', t.load);
    await t.cache.get('b', t.load);
    t.set('v2');
    t.cache.forget('a');
    expect(await t.cache.get('a', t.load)).toBe('v2');
    expect(await t.cache.get('b', t.load)).toBe('v1');
    t.cache.forget();
    t.set('v3');
    expect(await t.cache.get('b', t.load)).toBe('v3');
  });

  it('shares one load between concurrent misses, and does not keep a load that began before a forget', async () => {
    const t = setup();
    let release: (value: string) => void = () => {};
    const slow = () => {
      t.load();
      return new Promise<string>((resolve) => {
        release = resolve;
      });
    };
    const first = t.cache.get('k', slow);
    const second = t.cache.get('k', slow);
    t.cache.forget('k'); // e.g. the key was revoked while its row was being read
    release('read-before-revoke');
    expect(await first).toBe('read-before-revoke');
    expect(await second).toBe('read-before-revoke');
    expect(t.loads()).toBe(1);
    t.set('after');
    expect(await t.cache.get('k', t.load)).toBe('after');
  });

  it('treats an entry from the future (a clock set back) as stale', async () => {
    const t = setup();
    await t.cache.get('k', t.load);
    t.set('v2');
    t.clock.advance(-1_000);
    expect(await t.cache.get('k', t.load)).toBe('v2');
  });
});
