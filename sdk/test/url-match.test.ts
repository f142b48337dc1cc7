import { describe, expect, it } from 'vitest';
import { matchesAnyUrlPattern, matchesUrlPattern } from '../src/url-match.ts';

describe('matchesUrlPattern', () => {
  it.each([
    // [page, pattern, matches]
    ['https://shop.example.com/thank-you', '/thank-you', true],
    ['https://shop.example.com/thank-you/', '/thank-you', true],
    ['https://shop.example.com/thank-you', '/thank-you/', true],
    ['https://shop.example.com/thank-you?order=7#top', '/thank-you', true],
    ['https://shop.example.com/thank-you-not', '/thank-you', false],
    ['https://shop.example.com/en/thank-you', '/thank-you', false],
    ['https://shop.example.com/checkout/done', '/checkout/*', true],
    ['https://shop.example.com/checkout', '/checkout/*', false],
    ['https://shop.example.com/a/b/c/done', '/*/done', true],
    ['https://shop.example.com/signup?step=2', '/signup?step=2', true],
    ['https://shop.example.com/signup?step=1', '/signup?step=2', false],
    ['https://shop.example.com/signup?step=2&x=1', '/signup?step=2*', true],
    ['https://shop.example.com/thank-you', 'https://shop.example.com/thank-you', true],
    ['http://shop.example.com/thank-you', 'https://shop.example.com/thank-you', false],
    ['https://other.example.com/thank-you', 'https://shop.example.com/thank-you', false],
    ['https://shop.example.com/', 'https://shop.example.com/', true],
    ['https://shop.example.com/', 'https://shop.example.com', true],
    ['https://shop.example.com/?ref=mail', 'https://shop.example.com/?ref=mail', true],
    ['https://shop.example.com:8443/x', 'https://shop.example.com:8443/*', true],
    ['https://blog.shop.example.com/post/1', 'https://*.shop.example.com/post/*', true],
    ['https://shop.example.com/order/confirmation', 'confirmation', true],
    ['https://shop.example.com/order/confirmation', 'shop.example.com/order', true],
    ['https://shop.example.com/order/confirmation', 'receipt', false],
    ['https://shop.example.com/Thank-You', '/thank-you', true],
    ['https://shop.example.com/a.b', '/a*b', true],
    ['https://shop.example.com/axb', '/a.b', false],
    ['https://shop.example.com/x', '   ', false],
  ])('%s against %s → %s', (page, pattern, expected) => {
    expect(matchesUrlPattern(page, pattern)).toBe(expected);
  });

  it('matches when any pattern does, never with none, and ignores a malformed one', () => {
    expect(matchesAnyUrlPattern('https://shop.example.com/b', ['/a', '/b'])).toBe(true);
    expect(matchesAnyUrlPattern('https://shop.example.com/b', [])).toBe(false);
    expect(matchesAnyUrlPattern('https://shop.example.com/b', undefined)).toBe(false);
    expect(matchesAnyUrlPattern('not a url', ['/b'])).toBe(false);
  });
});
