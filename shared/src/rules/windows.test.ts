import { describe, expect, it } from 'vitest';
import { windowStatusAt } from './windows.ts';

const window = { startsAt: new Date('2026-12-01T09:00:00.000Z'), endsAt: new Date('2026-12-01T10:00:00.000Z') };

describe('windowStatusAt', () => {
  it.each([
    ['2026-12-01T08:59:59.999Z', 'scheduled'],
    ['2026-12-01T09:00:00.000Z', 'active'],
    ['2026-12-01T09:30:00.000Z', 'active'],
    ['2026-12-01T09:59:59.999Z', 'active'],
    ['2026-12-01T10:00:00.000Z', 'ended'],
    ['2026-12-01T10:00:00.001Z', 'ended'],
  ])('at %s the window is %s (start included, end excluded)', (at, expected) => {
    expect(windowStatusAt(window, new Date(at))).toBe(expected);
  });
});
