import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ADDRESS_PATTERN, emailSchema, stripControlCharacters } from './common.ts';
import { EMAIL_MAX_LENGTH, isEmailAddress } from './email.ts';
import { eventRequestSchema } from './events.ts';
import { perkRedemptionRequestSchema } from './perks.ts';
import { portalAdminInviteRequestSchema, portalResetRequestSchema, portalSignInRequestSchema } from './portal.ts';
import { portalOperatorInviteRequestSchema } from './portal-operator.ts';
import { pregenerateEmailRequestSchema } from './pregeneration.ts';

// One rule for what an e-mail address is (issue 33 §3): every schema that reads one agrees with
// `isEmailAddress` on every input, and `demo@localhost` (the address `npm start` invites) is one.

const BRAND = `0x${'a'.repeat(40)}`;

/** Each reader: whether it accepts `email` and, when it does, the value it keeps. */
const readers: Record<string, (email: string) => string | undefined> = {
  emailSchema: (email) => emailSchema.safeParse(email).data,
  'portal sign-in': (email) => portalSignInRequestSchema.safeParse({ email, password: 'x' }).data?.email,
  'portal reset': (email) => portalResetRequestSchema.safeParse({ email }).data?.email,
  'portal invite': (email) =>
    portalAdminInviteRequestSchema.safeParse({ email, role: 'viewer', brandId: BRAND }).data?.email,
  'operator invite': (email) => portalOperatorInviteRequestSchema.safeParse({ email }).data?.email,
  'event userEmail': (email) =>
    eventRequestSchema.safeParse({ brandId: BRAND, eventType: 'visit', userEmail: email }).data?.userEmail,
  'perk redemption': (email) =>
    perkRedemptionRequestSchema.safeParse({ brandId: BRAND, perkId: 1, userIdentifier: email }).data?.userIdentifier,
  pregeneration: (email) => pregenerateEmailRequestSchema.safeParse({ brand_id: BRAND, email }).data?.email,
};

/** An event's optional `userIdentifier` takes an e-mail (as is) or a 0x address. */
const eventIdentifier = (value: string) =>
  eventRequestSchema.safeParse({ brandId: BRAND, eventType: 'visit', userEmail: 'a@b.c', userIdentifier: value })
    .success;

/** What the readers see once control characters and surrounding space are gone (every reader cleans first). */
const cleaned = (value: string) => stripControlCharacters(value).trim();

const label = fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/);
const candidates = fc.oneof(
  fc.emailAddress(),
  fc.string(),
  fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })).map(([a, b]) => `${a}@${b}`),
  fc
    .tuple(fc.stringMatching(/^[A-Za-z0-9_'+.-]{1,12}$/), fc.array(label, { minLength: 1, maxLength: 3 }))
    .map(([local, labels]) => `${local}@${labels.join('.')}`),
  fc
    .tuple(fc.constantFrom(' ', '\u0000', '\t', ''), fc.emailAddress(), fc.constantFrom(' ', '\u0007', ''))
    .map(([before, email, after]) => `${before}${email}${after}`),
  fc.nat({ max: 300 }).map((length) => `${'a'.repeat(Math.max(1, length - 10))}@localhost`),
);

describe('the one e-mail rule', () => {
  it.each([
    ['demo@localhost', true],
    ['Demo@LocalHost', true],
    ['owner@acme.example.com', true],
    ["o'brien+tag@shop.example", true],
    ['a@b', true],
    ['discord_123@pts.local', true],
    ['no-at-sign', false],
    ['@localhost', false],
    ['demo@', false],
    ['.demo@localhost', false],
    ['demo.@localhost', false],
    ['de..mo@localhost', false],
    ['demo@-localhost', false],
    ['demo@localhost-', false],
    ['demo@local..host', false],
    ['demo@localhost.', false],
    ['two@at@signs', false],
    ['spa ce@example.com', false],
    [`${'a'.repeat(245)}@localhost`, false],
  ])('%s → %s', (email, expected) => {
    expect(isEmailAddress(email)).toBe(expected);
    for (const [name, read] of Object.entries(readers)) expect(read(email) !== undefined, name).toBe(expected);
  });

  it('every reader accepts exactly what isEmailAddress accepts, and keeps it cleaned and lowercased', () => {
    fc.assert(
      fc.property(candidates, (value) => {
        const email = cleaned(value);
        const expected = isEmailAddress(email);
        expect(email.length > EMAIL_MAX_LENGTH && expected).toBe(false);
        for (const [name, read] of Object.entries(readers)) {
          expect(read(value), name).toBe(expected ? email.toLowerCase() : undefined);
        }
        if (!ADDRESS_PATTERN.test(email)) expect(eventIdentifier(value), 'event userIdentifier').toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
