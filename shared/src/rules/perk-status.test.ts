import { describe, expect, it } from 'vitest';
import { type PerkStatus, type PerkStatusInput, perkStatusAt } from './perk-status.ts';

const NOW = new Date('2026-12-07T12:00:00Z');
const perk: PerkStatusInput = { active: true, onChain: true, startsAt: null, endsAt: null, maxSupply: 10 };

describe('perkStatusAt', () => {
  it.each<[string, Partial<PerkStatusInput>, number, PerkStatus]>([
    ['open, supply left', {}, 9, 'active'],
    ['unlimited supply', { maxSupply: null }, 1_000_000, 'active'],
    ['every one claimed', {}, 10, 'sold_out'],
    ['more claimed than the supply (lowered later)', { maxSupply: 5n }, 7, 'sold_out'],
    [
      'archived wins over everything',
      { archivedAt: '2026-12-06T00:00:00Z', onChain: false, active: false },
      10,
      'archived',
    ],
    ['not archived (null)', { archivedAt: null }, 0, 'active'],
    ['not on chain wins over the rest', { onChain: false, active: false }, 10, 'not_on_chain'],
    ['inactive wins over sold out', { active: false }, 10, 'inactive'],
    ['window opens later', { startsAt: '2026-12-07T12:00:01Z' }, 0, 'scheduled'],
    ['window opens now (start included)', { startsAt: NOW }, 0, 'active'],
    ['window closes now (end excluded)', { endsAt: '2026-12-07T12:00:00.000Z' }, 0, 'ended'],
    ['ended wins over sold out', { endsAt: '2026-12-01T00:00:00Z' }, 10, 'ended'],
    ['window still open', { endsAt: '2026-12-08T00:00:00Z' }, 0, 'active'],
  ])('%s → %s', (_name, change, claimed, expected) => {
    expect(perkStatusAt({ ...perk, ...change }, claimed, NOW)).toBe(expected);
  });
});
