import { createManualClock } from '@pts/shared';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { answerKey, createAnswerCache, STALE_FACTOR } from '../caching/answer-cache.ts';

const logger = pino({ level: 'silent' });

function counter() {
  let calls = 0;
  let release: (() => void) | undefined;
  return {
    get calls() {
      return calls;
    },
    compute: () => {
      calls++;
      const n = calls;
      return new Promise<number>((resolve) => {
        release = () => resolve(n);
      });
    },
    release: () => release?.(),
  };
}

describe('createAnswerCache', () => {
  it('computes once for concurrent callers of one key, and serves the answer while fresh', async () => {
    const clock = createManualClock();
    const cache = createAnswerCache({ clock, logger });
    const c = counter();
    const all = Promise.all(Array.from({ length: 20 }, () => cache.get('k', 60, c.compute)));
    c.release();
    expect(await all).toEqual(Array(20).fill(1));
    clock.advance(59_000);
    expect(await cache.get('k', 60, c.compute)).toBe(1);
    expect(c.calls).toBe(1);
  });

  it('serves a stale answer at once and refreshes it once in the background', async () => {
    const clock = createManualClock();
    const cache = createAnswerCache({ clock, logger });
    const c = counter();
    const first = cache.get('k', 60, c.compute);
    c.release();
    await first;
    clock.advance(61_000);
    expect(await cache.get('k', 60, c.compute)).toBe(1);
    expect(await cache.get('k', 60, c.compute)).toBe(1);
    expect(c.calls).toBe(2);
    c.release();
    await Promise.resolve();
    await Promise.resolve();
    expect(await cache.get('k', 60, c.compute)).toBe(2);
  });

  it('recomputes on the caller when the answer is older than the stale limit', async () => {
    const clock = createManualClock();
    const cache = createAnswerCache({ clock, logger });
    const c = counter();
    const first = cache.get('k', 60, c.compute);
    c.release();
    await first;
    clock.advance(STALE_FACTOR * 60_000);
    const second = cache.get('k', 60, c.compute);
    c.release();
    expect(await second).toBe(2);
  });

  it('never stores a failure, nor an answer computed across a clear()', async () => {
    const clock = createManualClock();
    const cache = createAnswerCache({ clock, logger });
    await expect(cache.get('k', 60, () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
    expect(await cache.get('k', 60, async () => 7)).toBe(7);
    const c = counter();
    const inFlight = cache.get('j', 60, c.compute);
    cache.clear();
    c.release();
    expect(await inFlight).toBe(1);
    const again = cache.get('j', 60, c.compute);
    c.release();
    expect(await again).toBe(2);
  });

  it('keeps at most maxEntries answers, dropping the least recently used', async () => {
    const cache = createAnswerCache({ clock: createManualClock(), logger, maxEntries: 2 });
    await cache.get('a', 60, async () => 'a1');
    await cache.get('b', 60, async () => 'b1');
    await cache.get('a', 60, async () => 'a2');
    await cache.get('c', 60, async () => 'c1');
    expect(cache.size).toBe(2);
    expect(await cache.get('a', 60, async () => 'a3')).toBe('a1');
    expect(await cache.get('b', 60, async () => 'b2')).toBe('b2');
  });
});

describe('answerKey', () => {
  it('is the same whatever the order of object keys, and tells inputs apart', () => {
    expect(answerKey('t', { a: 1, b: { y: 2, x: 1 } })).toBe(answerKey('t', { b: { x: 1, y: 2 }, a: 1 }));
    expect(answerKey('t', { a: 1 })).not.toBe(answerKey('t', { a: 2 }));
    expect(answerKey('t', { a: 1 })).not.toBe(answerKey('u', { a: 1 }));
    expect(answerKey('t', { n: 10n })).toBe(answerKey('t', { n: 10n }));
  });
});
