import { describe, expect, it } from 'vitest';
import { maskEmail, parsePlatformIdentity, platformUserEmail } from './identity.ts';

describe('parsePlatformIdentity', () => {
  it('reads synthetic identities', () => {
    expect(parsePlatformIdentity(platformUserEmail('Discord', '123456789012345678', 'pts.example'))).toEqual({
      platform: 'discord',
      platformUserId: '123456789012345678',
    });
    expect(parsePlatformIdentity('telegram_42@pts.example')).toEqual({ platform: 'telegram', platformUserId: '42' });
    expect(parsePlatformIdentity('twitter_44196397@pts.example')).toEqual({
      platform: 'x',
      platformUserId: '44196397',
    });
  });
  it('leaves ordinary emails alone', () => {
    expect(parsePlatformIdentity('jane_doe@example.com')).toBeUndefined();
    expect(parsePlatformIdentity('alice@example.com')).toBeUndefined();
  });
});

describe('maskEmail', () => {
  it.each([
    ['alice@example.com', 'al***@example.com'],
    ['a@example.com', 'a***@example.com'],
    ['ab@example.com', 'a***@example.com'],
    ['not-an-email', '***'],
  ])('%s → %s', (input, expected) => {
    expect(maskEmail(input)).toBe(expected);
  });
});
