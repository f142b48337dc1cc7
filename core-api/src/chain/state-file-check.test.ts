import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isCompleteJsonObject } from './local-chain.ts';

// The local chain's start decides from this check whether its state file is whole or was cut off by a kill
// in the middle of a dump. It reads in chunks (state files outgrow one JavaScript string), so every case runs
// with chunks of 3 bytes too: strings, escapes and nesting split across chunk ends.
const dir = mkdtempSync(join(tmpdir(), 'pts-state-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
function file(text: string): string {
  const path = join(dir, `state-${counter++}.json`);
  writeFileSync(path, text);
  return path;
}

const whole = JSON.stringify({
  block: { number: '0x1f', hash: '0xab' },
  accounts: { '0x01': { code: '0x6080', storage: { '0x0': '0x1' } } },
  quirks: ['a "quoted" } brace', 'back\\slash\\', '{[', '}]}'],
  history: [[1, 2, [3]], {}],
});

describe('isCompleteJsonObject', () => {
  for (const chunk of [3, 1 << 20]) {
    it(`accepts a whole object, braces and quotes inside strings included (chunks of ${chunk} bytes)`, () => {
      expect(isCompleteJsonObject(file(whole), chunk)).toBe(true);
      expect(isCompleteJsonObject(file(`\n  ${JSON.stringify(JSON.parse(whole), null, 2)}\n`), chunk)).toBe(true);
    });

    it(`refuses a file cut off anywhere (chunks of ${chunk} bytes)`, () => {
      for (let end = 0; end < whole.length; end += 7) {
        expect(isCompleteJsonObject(file(whole.slice(0, end)), chunk), `cut at ${end}`).toBe(false);
      }
      expect(isCompleteJsonObject(file(whole.slice(0, -1)), chunk)).toBe(false);
    });

    it(`refuses what is not one object (chunks of ${chunk} bytes)`, () => {
      expect(isCompleteJsonObject(file(''), chunk)).toBe(false);
      expect(isCompleteJsonObject(file('[1,2]'), chunk)).toBe(false);
      expect(isCompleteJsonObject(file(`${whole}{}`), chunk)).toBe(false);
      expect(isCompleteJsonObject(file('{"a": "unterminated}'), chunk)).toBe(false);
      expect(isCompleteJsonObject(file('{"a": 1}}'), chunk)).toBe(false);
    });
  }

  it('answers false for a file that does not exist', () => {
    expect(isCompleteJsonObject(join(dir, 'missing.json'))).toBe(false);
  });
});
