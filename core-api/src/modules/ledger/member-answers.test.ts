import { createManualClock } from '@pts/shared';
import { describe, expect, it } from 'vitest';
import {
  createMemberAnswers,
  createMemberChangeFeed,
  earliestAfter,
  type MemberAnswer,
  memberToken,
  nextUtcDay,
  walletToken,
} from './member-answers.ts';

// The cache's own rules, with a manual clock and a hand-driven notice feed and chain head. What the database
// announces for each write path, on both databases, is member-answers.writes.test.ts.

function setup(options: { maxEntries?: number; maxAgeMs?: number } = {}) {
  const clock = createManualClock(new Date('2026-11-29T10:00:00.000Z'));
  const feed = createMemberChangeFeed();
  let head: bigint | undefined = 7n;
  const answers = createMemberAnswers({
    clock,
    feed,
    maxEntries: options.maxEntries ?? 100,
    maxAgeMs: options.maxAgeMs ?? 60_000,
    chainHead: () => head,
  });
  feed.setListening(true);
  let computed = 0;
  const ask = (key: string, extra: Partial<MemberAnswer<number>> = {}) =>
    answers.answer(key, async () => {
      computed += 1;
      return { value: computed, tokens: [memberToken('a@example.com')], ...extra };
    });
  return {
    clock,
    feed,
    answers,
    ask,
    computed: () => computed,
    setHead: (next: bigint | undefined) => {
      head = next;
    },
  };
}

describe('member answers', () => {
  it('answers a repeated question from memory until a notice names one of its tokens', async () => {
    const t = setup();
    expect(await t.ask('q')).toBe(1);
    expect(await t.ask('q')).toBe(1);
    t.feed.notice('m:someone-else@example.com\nw:0xabc');
    expect(await t.ask('q')).toBe(1);
    t.feed.notice('m:b@example.com\nm:a@example.com');
    expect(await t.ask('q')).toBe(2);
    t.feed.notice('*');
    expect(await t.ask('q')).toBe(3);
    expect(t.computed()).toBe(3);
  });

  it('keeps nothing and serves nothing kept while the notices are not heard', async () => {
    const t = setup();
    await t.ask('q');
    t.feed.setListening(false);
    expect(t.answers.keeping).toBe(false);
    expect(await t.ask('q')).toBe(2);
    expect(await t.ask('q')).toBe(3);
    expect(t.answers.size).toBe(0);
    t.feed.setListening(true);
    expect(await t.ask('q')).toBe(4);
    expect(await t.ask('q')).toBe(4);
  });

  it('expires an entry at its deadline and at the maximum age (manual clock)', async () => {
    const t = setup({ maxAgeMs: 60_000 });
    await t.ask('streak', { validUntil: new Date('2026-11-29T10:00:10.000Z') });
    t.clock.advance(9_999);
    expect(await t.ask('streak', { validUntil: new Date('2026-11-29T10:00:10.000Z') })).toBe(1);
    t.clock.advance(1);
    expect(await t.ask('streak', { validUntil: new Date('2026-11-29T11:00:00.000Z') })).toBe(2);
    // Past the maximum age, whatever the deadline said.
    t.clock.advance(59_999);
    expect(await t.ask('streak')).toBe(2);
    t.clock.advance(1);
    expect(await t.ask('streak')).toBe(3);
  });

  it('keeps a chain read only while the head it was read at is current, and never without one', async () => {
    const t = setup();
    expect(await t.ask('balance', { chain: true })).toBe(1);
    expect(await t.ask('balance', { chain: true })).toBe(1);
    t.setHead(8n);
    expect(await t.ask('balance', { chain: true })).toBe(2);
    t.setHead(undefined);
    expect(await t.ask('balance', { chain: true })).toBe(3);
    expect(await t.ask('balance', { chain: true })).toBe(4);
  });

  it('does not keep an answer computed across a drop of one of its tokens, nor one marked not to keep', async () => {
    const t = setup();
    // A write's notice arrives while the answer is being read: what was read may predate the write.
    await t.answers.answer('q', async () => {
      t.feed.notice(`${memberToken('a@example.com')}`);
      return { value: 'before the write', tokens: [memberToken('a@example.com')] };
    });
    expect(t.answers.size).toBe(0);
    // A drop of another member's token does not matter.
    await t.answers.answer('q', async () => {
      t.feed.notice(walletToken('0xdef'));
      return { value: 'kept', tokens: [memberToken('a@example.com')] };
    });
    expect(t.answers.size).toBe(1);
    await t.ask('unsettled', { keep: false });
    expect(await t.ask('unsettled', { keep: false })).toBe(2);
  });

  it('is bounded: the least recently used entry goes first', async () => {
    const t = setup({ maxEntries: 2 });
    await t.ask('a');
    await t.ask('b');
    await t.ask('a');
    await t.ask('c');
    expect(t.answers.size).toBe(2);
    expect(await t.ask('a')).toBe(1);
    expect(await t.ask('b')).toBe(4);
  });

  it('finds the next UTC day and the earliest future moment', () => {
    const now = new Date('2026-11-29T23:59:59.000Z');
    expect(nextUtcDay(now).toISOString()).toBe('2026-11-30T00:00:00.000Z');
    expect(
      earliestAfter(now, [
        null,
        '2026-11-29T12:00:00.000Z',
        new Date('2026-12-01T00:00:00.000Z'),
        undefined,
      ])?.toISOString(),
    ).toBe('2026-12-01T00:00:00.000Z');
    expect(earliestAfter(now, [null])).toBeUndefined();
  });
});
