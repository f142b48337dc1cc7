/**
 * An RFC 4180 reader for tests, written apart from the writer (http/csv.ts) so a round trip checks one against
 * the other: fields split on commas, rows on CRLF, a quoted field may hold commas, quotes (doubled) and line
 * breaks.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (char === '"') {
        quoted = false;
        i += 1;
      } else {
        field += char;
        i += 1;
      }
    } else if (char === '"' && field === '') {
      quoted = true;
      i += 1;
    } else if (char === ',') {
      row.push(field);
      field = '';
      i += 1;
    } else if (char === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 2;
    } else {
      field += char;
      i += 1;
    }
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
