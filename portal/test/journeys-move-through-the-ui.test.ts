// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the samples are journey source text, `${…}` included
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Issue 33 "Done when": every Chromium journey moves as a person does. A journey opens only the addresses a
// person has (the portal's address or its sign-in page, or a link received by e-mail: an invite or a reset)
// and from there moves through links and buttons; `page.goto` to an inner page would hide a page a person
// cannot reach by clicking. This reads the journeys' sources and names every other `goto`.

const HERE = dirname(fileURLToPath(import.meta.url));

/** What a journey may open by address: the portal, its sign-in page, or a link from an e-mail. */
const START_ADDRESSES = [
  /^`\$\{[\w.]+\}\/portal\/(sign-in)?`$/, // `${platform.url}/portal/` or `${baseUrl}/portal/sign-in`
  /^[\w.]*(invite|reset)Url$/i, // inviteUrl, invite.body.inviteUrl, answer.body.inviteUrl
];

/** Each `.goto(…)` in `source` with its argument's text and its line. */
export function gotos(source: string): { line: number; target: string }[] {
  const found: { line: number; target: string }[] = [];
  for (const match of source.matchAll(/\.goto\(/g)) {
    let depth = 1;
    let end = match.index + match[0].length;
    while (end < source.length && depth > 0) {
      if (source[end] === '(') depth++;
      else if (source[end] === ')') depth--;
      end++;
    }
    const target = source
      .slice(match.index + match[0].length, end - 1)
      .trim()
      .replace(/,$/, '');
    found.push({ line: source.slice(0, match.index).split('\n').length, target });
  }
  return found;
}

/** The `goto`s of `source` that open anything but a start address (`file:line target`). */
export function innerGotos(file: string, source: string): string[] {
  return gotos(source)
    .filter(({ target }) => !START_ADDRESSES.some((allowed) => allowed.test(target)))
    .map(({ line, target }) => `${file}:${line} goto(${target})`);
}

describe('the Chromium journeys move through the UI', () => {
  it('tells a start address from an inner page', () => {
    const source = [
      'await page.goto(`${platform.url}/portal/sign-in`);',
      'await page.goto(`${baseUrl}/portal/`);',
      'await page.goto(invite.body.inviteUrl);',
      'await page.goto(inviteUrl);',
      'await page.goto(`${platform.url}/portal/brands/${brand.brandId}/program`);',
      'await viewer.goto(`${platform.url}${perkPath}`);',
      "await page.goto(`${platform.url}/portal/sign-in?next=${encodeURIComponent('/x')}`);",
    ].join('\n');
    expect(innerGotos('x.ts', source)).toEqual([
      'x.ts:5 goto(`${platform.url}/portal/brands/${brand.brandId}/program`)',
      'x.ts:6 goto(`${platform.url}${perkPath}`)',
      "x.ts:7 goto(`${platform.url}/portal/sign-in?next=${encodeURIComponent('/x')}`)",
    ]);
  });

  it('no journey (nor its helpers) opens an inner page by its address', () => {
    const files = readdirSync(HERE).filter(
      (file) => file.endsWith('.browser.test.ts') || file === 'browser-helpers.ts',
    );
    expect(files.length).toBeGreaterThan(10);
    const found = files.flatMap((file) => innerGotos(file, readFileSync(join(HERE, file), 'utf8')));
    expect(found, 'open the sign-in page (signIn) or the link a person has, then click (goTo)').toEqual([]);
  });

  it('every journey runs in the shared Chromium harness and checks its pages with expectPageSound', () => {
    // The harness (startChromium) counts every console error, page error, CSP report and unexpected dialog;
    // expectPageSound checks axe-core, 375 px and that count where a journey stands. csp.browser.test.ts is
    // the one journey with a browser of its own: it counts `securitypolicyviolation` events through an init
    // script in contexts it makes itself.
    const own = new Set(['csp.browser.test.ts']);
    const journeys = readdirSync(HERE).filter((file) => file.endsWith('.browser.test.ts') && !own.has(file));
    const missing = journeys.flatMap((file) => {
      const source = readFileSync(join(HERE, file), 'utf8');
      return [
        ...(/chromium\.launch\(/.test(source) ? [`${file}: launches its own Chromium (use startChromium)`] : []),
        ...(/startChromium\(/.test(source) ? [] : [`${file}: does not use startChromium`]),
        ...(/expectPageSound\(/.test(source) ? [] : [`${file}: never calls expectPageSound`]),
      ];
    });
    expect(missing).toEqual([]);
  });
});
