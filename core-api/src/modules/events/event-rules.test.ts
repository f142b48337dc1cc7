import { describe, expect, it } from 'vitest';
import { isUnlimited, type JudgedCandidate, judgeEvent } from './event-rules.ts';

// The spec 4.1 rules as a table: no database, no chain. Each row is a candidate, the user's counter, the
// rule's running total, and the verdict expected (the error code, or null when the event earns).

const NOW = new Date('2026-06-01T12:00:00Z');
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000);
const settings = { duplicateWindowSeconds: 60 };

interface Row {
  name: string;
  candidate?: Partial<JudgedCandidate>;
  rule?: Partial<JudgedCandidate['rule']>;
  counter?: { claims?: number; last_claim_at?: Date | null };
  total?: { total: number; max: number | null };
  expect: string | null;
  details?: Record<string, unknown>;
}

const rows: Row[] = [
  { name: 'a first event earns', expect: null },
  {
    name: 'a repeat inside the duplicate window',
    counter: { claims: 1, last_claim_at: ago(30) },
    expect: 'DUPLICATE_EVENT',
  },
  { name: 'a repeat just after the window', counter: { claims: 1, last_claim_at: ago(60) }, expect: null },
  {
    name: 'an externalId names the event: no window',
    candidate: { input: { eventType: 'purchase', externalId: 'order-2' } },
    counter: { claims: 1, last_claim_at: ago(5) },
    expect: null,
  },
  {
    name: 'a caller that deduplicates itself skips the window',
    candidate: { skipDuplicateWindow: true },
    counter: { claims: 1, last_claim_at: ago(5) },
    expect: null,
  },
  {
    name: 'a privileged source skips the window',
    candidate: { source: 'chat_admin' },
    counter: { claims: 1, last_claim_at: ago(5) },
    expect: null,
  },
  {
    name: 'cooldown still running',
    rule: { cooldown_hours: 24 },
    counter: { claims: 1, last_claim_at: ago(3600) },
    expect: 'COOLDOWN_ACTIVE',
    details: { remainingSeconds: 23 * 3600, cooldownSeconds: 86_400 },
  },
  {
    name: 'cooldown over',
    rule: { cooldown_hours: 24 },
    counter: { claims: 1, last_claim_at: ago(86_400) },
    expect: null,
  },
  {
    name: 'a source does not skip the cooldown',
    candidate: { source: 'chat_admin' },
    rule: { cooldown_hours: 1 },
    counter: { claims: 1, last_claim_at: ago(600) },
    expect: 'COOLDOWN_ACTIVE',
  },
  {
    name: 'skipCooldown does',
    candidate: { skipCooldown: true },
    rule: { cooldown_hours: 1 },
    counter: { claims: 1, last_claim_at: ago(600) },
    expect: null,
  },
  {
    name: 'per-user limit reached',
    rule: { max_claims_per_user: 2 },
    counter: { claims: 2, last_claim_at: ago(7200) },
    expect: 'MAX_CLAIMS_REACHED',
    details: { totalClaims: 2, maxClaims: 2 },
  },
  {
    name: 'per-user limit not reached',
    rule: { max_claims_per_user: 2 },
    counter: { claims: 1, last_claim_at: ago(7200) },
    expect: null,
  },
  {
    name: '-1 is unlimited',
    rule: { max_claims_per_user: -1 },
    counter: { claims: 10_000, last_claim_at: ago(7200) },
    expect: null,
  },
  {
    name: '999999 is unlimited',
    rule: { max_claims_per_user: 999_999 },
    counter: { claims: 10_000_000, last_claim_at: ago(7200) },
    expect: null,
  },
  {
    name: 'a source bypasses the per-user limit',
    candidate: { source: 'chat_admin' },
    rule: { max_claims_per_user: 1 },
    counter: { claims: 1, last_claim_at: ago(7200) },
    expect: null,
  },
  {
    name: 'global limit reached',
    total: { total: 10, max: 10 },
    expect: 'MAX_TOTAL_CLAIMS_REACHED',
    details: { maxTotal: 10 },
  },
  { name: 'global limit not reached', total: { total: 9, max: 10 }, expect: null },
  {
    name: 'a source does not bypass the global limit',
    candidate: { source: 'chat_admin' },
    total: { total: 3, max: 3 },
    expect: 'MAX_TOTAL_CLAIMS_REACHED',
  },
  {
    name: 'the window is judged before the cooldown (spec order)',
    rule: { cooldown_hours: 24, max_claims_per_user: 1 },
    counter: { claims: 1, last_claim_at: ago(10) },
    expect: 'DUPLICATE_EVENT',
  },
  {
    name: 'the cooldown before the per-user limit',
    rule: { cooldown_hours: 24, max_claims_per_user: 1 },
    counter: { claims: 1, last_claim_at: ago(3600) },
    expect: 'COOLDOWN_ACTIVE',
  },
];

describe('judgeEvent (spec 4.1 rules 4–7)', () => {
  it.each(rows)('$name', (row) => {
    const candidate: JudgedCandidate = {
      input: { eventType: 'purchase' },
      rule: { cooldown_hours: 0, max_claims_per_user: -1, ...row.rule },
      source: undefined,
      skipCooldown: false,
      ...row.candidate,
    };
    const counter = { claims: 0, last_claim_at: null, last_event_id: null, ...row.counter };
    const verdict = judgeEvent(candidate, counter, row.total, NOW, settings);
    expect(verdict?.code ?? null).toBe(row.expect);
    if (row.details) expect(verdict?.details).toMatchObject(row.details);
  });

  it('says when a cooldown ends, and sets Retry-After to the remaining seconds', () => {
    const verdict = judgeEvent(
      {
        input: { eventType: 'daily' },
        rule: { cooldown_hours: 1, max_claims_per_user: -1 },
        source: undefined,
        skipCooldown: false,
      },
      { claims: 1, last_claim_at: ago(1800), last_event_id: 'e1' },
      undefined,
      NOW,
      settings,
    );
    expect(verdict?.retryAfter).toBe(1800);
    expect(verdict?.details).toMatchObject({ nextEligibleAt: '2026-06-01T12:30:00.000Z' });
  });

  it('knows the two spellings of unlimited', () => {
    expect([-1, 999_999, 0, 1, 999_998].map(isUnlimited)).toEqual([true, true, false, false, false]);
  });
});
