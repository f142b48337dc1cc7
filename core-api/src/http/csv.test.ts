import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCsv } from '../../test/csv.ts';
import { csvCell, csvLine } from './csv.ts';

// CSV answers (http/csv.ts): every cell survives a round trip through an independent RFC 4180 reader, and a
// text cell a spreadsheet would run as a formula comes back defused with a leading `'`.

/** What a cell reads as after the round trip: the text, defused when it starts like a formula. */
const expected = (cell: string) => (/^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell);

describe('csv', () => {
  it('round-trips any rows of text through quoting, formulas defused', () => {
    const text = fc.string({
      unit: fc.constantFrom('a', 'Z', '1', ',', '"', '\r', '\n', ' ', '=', '+', '-', '@', '\t', 'é'),
    });
    fc.assert(
      fc.property(fc.array(fc.array(text, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }), (rows) => {
        // A row of one empty cell is an empty line, which RFC 4180 leaves ambiguous: keep a second cell.
        const written = rows.map((row) => (row.length === 1 && row[0] === '' ? [...row, 'x'] : row));
        expect(parseCsv(written.map(csvLine).join(''))).toEqual(written.map((row) => row.map(expected)));
      }),
      { numRuns: 500 },
    );
  });

  it('leaves numbers as they are (a negative balance is a number, not a formula) and null empty', () => {
    fc.assert(
      fc.property(fc.bigInt(), fc.integer(), (big, small) => {
        expect(parseCsv(csvLine([big, small, null]))).toEqual([[String(big), String(small), '']]);
      }),
    );
  });

  it.each([
    ['=HYPERLINK("http://x")', `"'=HYPERLINK(""http://x"")"`],
    ['+1', "'+1"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['plain@x.com', 'plain@x.com'],
  ])('writes %j as %j', (cell, written) => {
    expect(csvCell(cell)).toBe(written);
  });
});
