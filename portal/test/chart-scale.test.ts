import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AXIS_GAP_PX, axisWidth, labelWidth, niceTicks, yAxis } from '../src/charts/scale.ts';
import {
  formatAxisValue,
  formatCount,
  formatDecimal,
  formatEth,
  formatMoney,
  formatRate,
} from '../src/format/numbers.ts';

// The dashboard's numbers at real volume (issue 33 §13): pure formatting and scale rules.

describe('formatters', () => {
  it.each([
    [formatCount(600000), '600,000'],
    [formatCount(0), '0'],
    [formatDecimal('600000'), '600,000'],
    [formatDecimal('123456789012345678901234567890'), '123,456,789,012,345,678,901,234,567,890'],
    [formatDecimal('1250.50'), '1,250.50'],
    [formatDecimal('-1500'), '-1,500'],
    [formatDecimal('n/a'), 'n/a'],
    [formatEth('0.000123456789012345678'), '0.000123457 ETH'],
    [formatEth('0.000000000000000001'), '0.000000000000000001 ETH'],
    [formatEth('1234.567890123456789'), '1,234.57 ETH'],
    [formatEth('0'), '0 ETH'],
    [formatAxisValue(9500), '9,500'],
    [formatAxisValue(600000), '600K'],
    [formatAxisValue(1_200_000), '1.2M'],
    [formatAxisValue(0), '0'],
    [formatMoney('1.00', 'USD'), '$1.00'],
    [formatMoney('1250.50', 'EUR'), '€1,250.50'],
    [formatMoney('10', 'JPY'), '¥10'],
    [formatMoney('123456789012345678.99', 'USD'), '$123,456,789,012,345,678.99'],
    [formatMoney('2.500', 'KWD'), '2.500 KWD'],
    [formatRate({ pts: 2, per: '1.00', currency: 'USD' }), '2 pts per $1.00'],
    [formatRate({ pts: 1, per: '10', currency: 'GBP' }), '1 pt per £10'],
  ])('%s is %s', (actual, expected) => {
    expect(actual).toBe(expected);
  });

  it('ETH never shows more than six significant digits', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 24n }), (wei) => {
        const eth = `${wei / 10n ** 18n}.${(wei % 10n ** 18n).toString().padStart(18, '0')}`;
        const digits = formatEth(eth).replace(' ETH', '').replace(/[,.]/g, '').replace(/^0+/, '');
        expect(digits.replace(/0+$/, '').length).toBeLessThanOrEqual(6);
      }),
    );
  });
});

describe('y axis', () => {
  it.each([
    [0, [0, 1]],
    [1, [0, 1]],
    [3, [0, 1, 2, 3]],
    [7, [0, 2, 4, 6, 8]],
    [600_000, [0, 200_000, 400_000, 600_000]],
    [612_345, [0, 200_000, 400_000, 600_000, 800_000]],
  ])('ticks for %d are %j', (max, ticks) => {
    expect(niceTicks(max)).toEqual(ticks);
  });

  it('ticks start at 0, rise by one whole step, cover the max, and are at most five', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.double({ min: 0, max: 1e15, noNaN: true })), (max) => {
        const ticks = niceTicks(max);
        expect(ticks[0]).toBe(0);
        expect(ticks[ticks.length - 1]).toBeGreaterThanOrEqual(max);
        expect(ticks.length).toBeLessThanOrEqual(5);
        const step = ticks[1]! - ticks[0]!;
        expect(Number.isInteger(step) && step >= 1).toBe(true);
        expect(ticks).toEqual(ticks.map((_, i) => i * step));
      }),
    );
  });

  it('every label fits the axis, labels are distinct, and the axis stays narrow at any magnitude', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e15, noNaN: true }), (max) => {
        const axis = yAxis(max);
        for (const label of axis.labels) expect(labelWidth(label) + AXIS_GAP_PX).toBeLessThanOrEqual(axis.width);
        expect(new Set(axis.labels).size).toBe(axis.labels.length);
        // The widest compact label ("800T", "9,000") leaves a 375 px phone most of its width for the plot.
        expect(axis.width).toBeLessThanOrEqual(56);
      }),
    );
  });

  it('the width follows the widest label: "600,000" needs more room than "600K"', () => {
    expect(axisWidth(['600,000'])).toBeGreaterThan(axisWidth(['600K']));
    expect(axisWidth(['0', '9,000'])).toBe(axisWidth(['9,000']));
  });
});
