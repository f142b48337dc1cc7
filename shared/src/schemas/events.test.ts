import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventRequestSchema } from './events.ts';

const valid = {
  brandId: '0xAbCdEf0123456789abcdef0123456789ABCDEF01',
  eventType: 'account_creation',
  userEmail: 'Alice@Example.com',
};

describe('eventRequestSchema', () => {
  it('lowercases brand ids and emails', () => {
    const parsed = eventRequestSchema.parse(valid);
    expect(parsed.brandId).toBe('0xabcdef0123456789abcdef0123456789abcdef01');
    expect(parsed.userEmail).toBe('alice@example.com');
  });

  it.each([
    ['brandId', '0x123', false],
    ['brandId', `0x${'g'.repeat(40)}`, false],
    ['eventType', 'a'.repeat(50), true],
    ['eventType', 'a'.repeat(51), false],
    ['eventType', 'custom_quiz', true],
    ['eventType', 'has-dash', false],
    ['domain', 'shop.example.com', true],
    ['domain', 'localhost', true],
    ['domain', '-bad.example', false],
    ['domain', `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}.io`, false],
    ['sourceUrl', 'https://shop.example.com/a?b=c', true],
    ['sourceUrl', 'javascript:alert(1)', false],
    ['sourceUrl', `https://x.io/${'a'.repeat(2040)}`, false],
    ['userIdentifier', '0x0000000000000000000000000000000000000001', true],
    ['userIdentifier', 'bob@example.com', true],
    ['userIdentifier', 'bob', false],
    ['channel_id', 'general', true],
  ])('%s = %s is valid: %s', (field, value, ok) => {
    expect(eventRequestSchema.safeParse({ ...valid, [field]: value }).success).toBe(ok);
  });

  it('removes control characters before validating', () => {
    const parsed = eventRequestSchema.parse({
      ...valid,
      userEmail: 'al\u0000ice@exa\u0007mple.com',
      channel_id: 'gen\u001beral',
    });
    expect(parsed.userEmail).toBe('alice@example.com');
    expect(parsed.channel_id).toBe('general');
  });

  it('removes control characters from metadata keys and values at any depth', () => {
    const parsed = eventRequestSchema.parse({
      ...valid,
      metadata: { 'k\u0000ey': ['a\u0000b', { deep: 'c\u0001d' }], n: 1 },
    });
    expect(parsed.metadata).toEqual({ key: ['ab', { deep: 'cd' }], n: 1 });
  });

  it('never throws on arbitrary input, and what it accepts is clean', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            brandId: fc.oneof(fc.string(), fc.constant(valid.brandId)),
            eventType: fc.oneof(fc.string(), fc.stringMatching(/^[a-z_]{1,50}$/)),
            userEmail: fc.oneof(fc.string(), fc.emailAddress()),
            domain: fc.oneof(fc.string(), fc.domain()),
            sourceUrl: fc.oneof(fc.string(), fc.webUrl()),
            metadata: fc.oneof(fc.object(), fc.anything()),
          },
          { requiredKeys: [] },
        ),
        (input) => {
          const result = eventRequestSchema.safeParse(input);
          if (result.success) {
            // biome-ignore lint/suspicious/noControlCharactersInRegex: checking their absence
            const control = /[\u0000-\u001f\u007f]/;
            expect(control.test(result.data.userEmail)).toBe(false);
            expect(result.data.brandId).toMatch(/^0x[0-9a-f]{40}$/);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
