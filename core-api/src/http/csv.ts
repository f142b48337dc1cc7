import type { Response } from 'express';

// CSV answers (docs/portal.md, "Members": exports): RFC 4180 quoting, cells a spreadsheet would run as a
// formula defused, and rows written as they are read with the socket's backpressure honoured.

/** A cell: text (quoted when needed, defused when it could start a formula), a number, or empty. */
export type CsvCell = string | number | bigint | null;

/** A text cell starting with one of these runs as a formula in a spreadsheet (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One cell as CSV: text starting like a formula gets a leading `'`; quotes, commas and line breaks are quoted. */
export function csvCell(cell: CsvCell): string {
  if (cell === null) return '';
  if (typeof cell !== 'string') return String(cell);
  const text = FORMULA_START.test(cell) ? `'${cell}` : cell;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One row with its CRLF line end. */
export function csvLine(cells: readonly CsvCell[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/** Resolves when the response can take more (or has closed: the reader left). */
function writeWithBackpressure(res: Response, chunk: string): Promise<void> {
  if (res.write(chunk)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Answers `rows` as a CSV attachment named `filename`: the header, then each batch written as soon as it is
 * read, the next batch read only once the socket took the last one. A reader who leaves stops the reading.
 */
export async function sendCsv(
  res: Response,
  filename: string,
  header: readonly string[],
  batches: AsyncIterable<readonly CsvCell[][]>,
): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${filename.replace(/[^\w.-]/g, '_')}"`);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  await writeWithBackpressure(res, csvLine(header));
  for await (const rows of batches) {
    if (res.destroyed) return;
    await writeWithBackpressure(res, rows.map(csvLine).join(''));
  }
  res.end();
}
