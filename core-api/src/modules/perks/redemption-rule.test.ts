import { describe, expect, it } from 'vitest';
import {
  judgeRedemption,
  type RedemptionFacts,
  type RedemptionRefusal,
  redeemableWithEnoughPts,
  redemptionRefused,
  withinWindow,
} from './redemption-rule.ts';

const perk = { cost: 100n, active: true, onChain: true, maxSupply: 10n, maxPerUser: 1n };
const base: RedemptionFacts = { perk, spendable: 100n, claimedTotal: 0n, memberClaims: 0n };
const facts = (change: Partial<Omit<RedemptionFacts, 'perk'>> & { perk?: Partial<RedemptionFacts['perk']> }) => ({
  ...base,
  ...change,
  perk: { ...perk, ...change.perk },
});

describe('withinWindow', () => {
  const at = (iso: string) => new Date(iso);
  it.each([
    ['no window', null, null, '2027-01-01T00:00:00Z', true],
    ['before the start', '2027-01-02T00:00:00Z', null, '2027-01-01T23:59:59Z', false],
    ['at the start', '2027-01-02T00:00:00Z', null, '2027-01-02T00:00:00Z', true],
    ['before the end', null, '2027-01-03T00:00:00Z', '2027-01-02T23:59:59Z', true],
    ['at the end (exclusive)', null, '2027-01-03T00:00:00Z', '2027-01-03T00:00:00Z', false],
  ])('%s', (_name, starts, ends, now, expected) => {
    const row = { starts_at: starts ? at(starts) : null, ends_at: ends ? at(ends) : null };
    expect(withinWindow(row, at(now as string))).toBe(expected);
  });
});

describe('judgeRedemption', () => {
  const table: [string, RedemptionFacts, RedemptionRefusal[], bigint][] = [
    ['exactly affordable, supply and limit left', base, [], 0n],
    ['one pt short', facts({ spendable: 99n }), ['insufficient_balance'], 1n],
    ['nothing to spend', facts({ spendable: 0n }), ['insufficient_balance'], 100n],
    ['last unit of supply', facts({ claimedTotal: 9n }), [], 0n],
    ['sold out', facts({ claimedTotal: 10n }), ['sold_out'], 0n],
    ['over-claimed supply still sold out', facts({ claimedTotal: 11n }), ['sold_out'], 0n],
    ['unlimited supply', facts({ perk: { maxSupply: null }, claimedTotal: 10_000n }), [], 0n],
    ['member holds the limit', facts({ memberClaims: 1n }), ['claim_limit_reached'], 0n],
    ['member below a limit of 3', facts({ perk: { maxPerUser: 3n }, memberClaims: 2n }), [], 0n],
    ['member at a limit of 3', facts({ perk: { maxPerUser: 3n }, memberClaims: 3n }), ['claim_limit_reached'], 0n],
    ['unlimited per member (0)', facts({ perk: { maxPerUser: 0n }, memberClaims: 50n }), [], 0n],
    ['inactive', facts({ perk: { active: false } }), ['inactive'], 0n],
    ['outside its redemption window', facts({ perk: { inWindow: false } }), ['outside_window'], 0n],
    ['inside its redemption window', facts({ perk: { inWindow: true } }), [], 0n],
    ['not on chain', facts({ perk: { onChain: false } }), ['not_on_chain'], 0n],
    ['constraints not met', facts({ eligible: false }), ['not_eligible'], 0n],
    ['constraints met', facts({ eligible: true }), [], 0n],
    ['free perk with no balance', facts({ perk: { cost: 0n }, spendable: 0n }), [], 0n],
    [
      'every reason at once, in order',
      facts({
        perk: { onChain: false, active: false },
        spendable: 40n,
        claimedTotal: 10n,
        memberClaims: 1n,
        eligible: false,
      }),
      ['not_on_chain', 'inactive', 'insufficient_balance', 'sold_out', 'claim_limit_reached', 'not_eligible'],
      60n,
    ],
    [
      'short and at the limit',
      facts({ spendable: 10n, memberClaims: 1n }),
      ['insufficient_balance', 'claim_limit_reached'],
      90n,
    ],
  ];

  it.each(table)('%s', (_name, input, refusals, missing) => {
    const decision = judgeRedemption(input);
    expect(decision.allowed).toBe(refusals.length === 0);
    expect(decision.refusals).toEqual(refusals);
    expect(decision.missing).toBe(missing);
    if (!decision.allowed) expect(decision.refusal).toBe(refusals[0]);
  });

  it('offers a perk for which only pts are missing, never one refused for another reason', () => {
    expect(redeemableWithEnoughPts(judgeRedemption(base))).toBe(true);
    expect(redeemableWithEnoughPts(judgeRedemption(facts({ spendable: 0n })))).toBe(true);
    expect(redeemableWithEnoughPts(judgeRedemption(facts({ memberClaims: 1n })))).toBe(false);
    expect(redeemableWithEnoughPts(judgeRedemption(facts({ spendable: 0n, memberClaims: 1n })))).toBe(false);
    expect(redeemableWithEnoughPts(judgeRedemption(facts({ claimedTotal: 10n })))).toBe(false);
    expect(redeemableWithEnoughPts(judgeRedemption(facts({ perk: { active: false } })))).toBe(false);
  });

  it('turns the first refusal into the error the redemption answers', () => {
    const context = { perkId: 7n, perkName: 'Mug', member: 'a@example.com', reservedByPending: 20n };
    const cases: [RedemptionFacts, string, number, Record<string, unknown>][] = [
      [facts({ spendable: 30n }), 'INSUFFICIENT_BALANCE', 409, { missing: 70, reservedByPendingRedemptions: 20 }],
      [facts({ claimedTotal: 10n }), 'SOLD_OUT', 409, { maxSupply: 10, totalClaimed: 10 }],
      [facts({ memberClaims: 1n }), 'CLAIM_LIMIT_REACHED', 409, { currentClaims: 1, maxPerUser: 1 }],
      [facts({ perk: { active: false } }), 'PERK_UNAVAILABLE', 409, { reason: 'inactive' }],
      [facts({ perk: { onChain: false } }), 'PERK_UNAVAILABLE', 409, { reason: 'not_on_chain' }],
      [facts({ eligible: false }), 'NOT_ELIGIBLE', 403, { reason: 'not_eligible' }],
    ];
    for (const [input, code, status, details] of cases) {
      const decision = judgeRedemption(input);
      if (decision.allowed) throw new Error('expected a refusal');
      const error = redemptionRefused(decision, input, context);
      expect(error.code).toBe(code);
      expect(error.status).toBe(status);
      expect(error.details).toMatchObject(details);
      expect(error.message).toContain('"Mug"');
    }
  });
});
