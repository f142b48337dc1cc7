import { describe, expect, it } from 'vitest';
import {
  normalizeMailbox,
  normalizeReferralCode,
  REFERRAL_CODE_PATTERN,
  referralCapAllows,
  referralCodeFromBytes,
  selfReferralReason,
} from './referrals.ts';

describe('normalizeMailbox', () => {
  it.each([
    ['Jane.Doe+promo@Gmail.com', 'janedoe@gmail.com'],
    ['j.a.n.e.doe@googlemail.com', 'janedoe@gmail.com'],
    ['jane.doe+x@outlook.com', 'jane.doe@outlook.com'],
    ['jane.doe@outlook.com', 'jane.doe@outlook.com'],
    ['jane+a+b@fastmail.com', 'jane@fastmail.com'],
    ['jane-shop@yahoo.com', 'jane@yahoo.com'],
    ['jane-shop@example.com', 'jane-shop@example.com'],
    ['+only@gmail.com', '+only@gmail.com'],
    ['JANE@Example.COM.', 'jane@example.com'],
  ])('%s is the mailbox %s', (address, mailbox) => {
    expect(normalizeMailbox(address)).toBe(mailbox);
  });
});

describe('referral codes', () => {
  it('makes 8-character codes of the Crockford alphabet', () => {
    const code = referralCodeFromBytes(new Uint8Array([0, 31, 32, 255, 8, 18, 21, 27]));
    expect(code).toBe('0Z0Z8JNV');
    expect(REFERRAL_CODE_PATTERN.test(code)).toBe(true);
  });
  it.each([
    [' abcd-efgh ', 'ABCDEFGH'],
    ['0ilo2345', '01102345'],
    ['abcdefg', undefined],
    ['ABCDEFGU', undefined],
    ['ABCDEFGH1', undefined],
  ])('reads %j as %j', (input, code) => {
    expect(normalizeReferralCode(input)).toBe(code);
  });
});

describe('selfReferralReason', () => {
  const party = (identityKey: string, extra: { accountKey?: string; keys?: string[]; wallets?: string[] } = {}) => ({
    identityKey,
    accountKey: extra.accountKey ?? identityKey,
    identityKeys: extra.keys ?? [identityKey],
    wallets: extra.wallets ?? [],
  });
  it.each([
    ['the same identity', party('a@x.com'), party('a@x.com'), 'self_referral_account'],
    [
      'identities linked to one account',
      party('a@x.com', { keys: ['a@x.com', 'tg_1@svc'] }),
      party('tg_1@svc', { accountKey: 'a@x.com', keys: ['a@x.com', 'tg_1@svc'] }),
      'self_referral_linked_identity',
    ],
    [
      'one wallet',
      party('a@x.com', { wallets: ['0xAB'] }),
      party('b@x.com', { wallets: ['0xab'] }),
      'self_referral_wallet',
    ],
    ['one gmail inbox', party('jane.doe@gmail.com'), party('janedoe+1@googlemail.com'), 'self_referral_mailbox'],
    ['two people', party('a@x.com', { wallets: ['0x1'] }), party('b@x.com', { wallets: ['0x2'] }), undefined],
  ])('%s → %s', (_name, referrer, referee, reason) => {
    expect(selfReferralReason(referrer, referee)).toBe(reason);
  });
});

describe('referralCapAllows', () => {
  it.each([
    [null, 1000, true],
    [3, 2, true],
    [3, 3, false],
    [0, 0, false],
  ] as const)('cap %j with %j paid → %j', (cap, paid, allowed) => {
    expect(referralCapAllows(cap, paid)).toBe(allowed);
  });
});
