import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { sanitizeDisplayName } from './display-names.ts';

describe('sanitizeDisplayName', () => {
  it.each([
    ['  Ada  Lovelace ', 'Ada Lovelace'],
    ['@ada_l', '@ada_l'],
    ['line\nbreak\ttab', 'line break tab'],
    ['bi\u202edi\u200b', 'bidi'],
    ['<script>x</script>', 'scriptx/script'],
    ['é'.normalize('NFD'), 'é'],
    ['x'.repeat(80), 'x'.repeat(64)],
    ['😀'.repeat(70), '😀'.repeat(64)],
    ['   ', undefined],
    ['\u200b\u200b', undefined],
    [42, undefined],
    [null, undefined],
    [{ name: 'x' }, undefined],
  ])('%j → %j', (input, expected) => {
    expect(sanitizeDisplayName(input)).toBe(expected);
  });
});

describe('display names on the leaderboards', () => {
  let platform: TestPlatform;
  let brand: CreatedBrand;
  let other: CreatedBrand;

  beforeAll(async () => {
    platform = await startTestPlatform();
    const rules = [{ eventType: 'post_mention', rewardAmount: 40, cooldownHours: 0, maxClaims: -1 }];
    brand = await platform.createBrand({ domain: 'names.example.com', rules });
    other = await platform.createBrand({ domain: 'other.example.com', rules });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
  });

  const mention = (b: CreatedBrand, identityKey: string, metadata: Record<string, unknown>) => {
    platform.clock.advance(61_000);
    return platform.signedPost(
      '/pts-api/manual-event',
      { brandId: b.brandId, eventType: 'post_mention', userEmail: identityKey, metadata },
      b.securityKey,
    );
  };

  it('shows the latest metadata.displayName of an event, per brand, cleaned', async () => {
    const user = 'x_1234567@pts.local';
    expect((await mention(brand, user, { displayName: '@first' })).status).toBe(200);
    expect((await mention(brand, user, { displayName: ' @ada\u202e_x ' })).status).toBe(200);
    expect((await mention(other, user, { displayName: 'Other brand name' })).status).toBe(200);
    // Not a string: ignored, the event still pays and the stored name stays.
    expect((await mention(brand, user, { displayName: 17 })).status).toBe(200);
    await waitForMintsSettled(platform);
    const res = await platform.get(`/services/leaderboard/${brand.brandId}?metric=pts_earned&period=all_time`);
    expect(res.body.leaderboard).toMatchObject([{ userIdentifier: user, username: '@ada_x', value: 120, rank: 1 }]);
    const elsewhere = await platform.get(`/services/leaderboard/${other.brandId}?metric=pts_earned&period=all_time`);
    expect(elsewhere.body.leaderboard[0].username).toBe('Other brand name');
  });

  it('takes the name from streak activity too (the streak board)', async () => {
    const user = 'telegram_99887766@pts.local';
    const res = await platform.signedPost(
      '/services/streak/record-activity',
      { brandId: brand.brandId, userIdentifier: user, platform: 'telegram', metadata: { displayName: 'Bob B.' } },
      brand.securityKey,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const board = await platform.get(
      `/services/leaderboard/${brand.brandId}?metric=streak&user=${encodeURIComponent(user)}`,
    );
    expect(board.body.me).toMatchObject({ userIdentifier: user, username: 'Bob B.', value: 1 });
  });
});
