import type { CreatedBrand } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { createCampaign } from './campaigns.service.ts';

// A hashtag campaign's per-user limit is decided by core-api in the event's own transaction: whatever the
// X bot remembers (or forgot), a user's campaign posts past the limit are refused, however fast they come.

const HOUR = 3600 * 1000;
let platform: TestPlatform;
let brand: CreatedBrand;

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' });
  brand = await platform.createBrand({
    name: 'Campaign Brand',
    rules: [{ eventType: 'post_hashtag', rewardAmount: 50, cooldownHours: 0, maxClaims: -1 }],
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function campaign(maxClaimsPerUser: number) {
  const now = platform.clock.now().getTime();
  return createCampaign({ db: platform.deps.db, clock: platform.clock }, brand.brandId, {
    hashtag: `#Limit${maxClaimsPerUser}x${now % 100000}`,
    reward: 40,
    startDate: new Date(now - HOUR).toISOString(),
    endDate: new Date(now + HOUR).toISOString(),
    maxClaimsPerUser,
    excludeBrandPosts: true,
  });
}

function hashtagEvent(campaignId: string, user: string, postId: string) {
  return platform.signedPost(
    '/pts-api/manual-event',
    {
      brandId: brand.brandId,
      eventType: 'post_hashtag',
      userEmail: user,
      externalId: postId,
      metadata: { platform: 'x', post_id: postId, campaign_id: campaignId },
    },
    brand.securityKey,
  );
}

async function paidFor(campaignId: string, user: string) {
  const rows = await platform.deps.db
    .selectFrom('events')
    .select(['reward_amount', 'metadata'])
    .where('brand_id', '=', brand.brandId)
    .where('user_email', '=', user)
    .where('status', '=', 'accepted')
    .execute();
  return rows.filter((r) => (r.metadata as Record<string, unknown>).campaign_id === campaignId).length;
}

describe('hashtag campaign per-user limit', () => {
  it('refuses a second campaign post of the same user (429 max_claims_reached), other users still earn', async () => {
    const c = await campaign(1);
    const first = await hashtagEvent(c.id, 'x_7001@pts.local', '7001001');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.rewardAmount).toBe(40);
    platform.clock.advance(1000);
    const second = await hashtagEvent(c.id, 'x_7001@pts.local', '7001002');
    expect(second.status).toBe(429);
    expect(second.body.details).toMatchObject({ reason: 'max_claims_reached', maxClaims: 1, campaignId: c.id });
    const other = await hashtagEvent(c.id, 'x_7002@pts.local', '7002001');
    expect(other.status).toBe(200);
    expect(await paidFor(c.id, 'x_7001@pts.local')).toBe(1);
  });

  it('pays exactly the limit when a user’s campaign posts arrive at once', async () => {
    const c = await campaign(2);
    platform.clock.advance(1000);
    const answers = await Promise.all(
      ['1', '2', '3', '4', '5'].map((n) => hashtagEvent(c.id, 'x_7003@pts.local', `700300${n}`)),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(3);
    expect(await paidFor(c.id, 'x_7003@pts.local')).toBe(2);
  });

  it('two concurrent submissions against a limit of one: one paid', async () => {
    const c = await campaign(1);
    platform.clock.advance(1000);
    const [a, b] = await Promise.all([
      hashtagEvent(c.id, 'x_7004@pts.local', '7004001'),
      hashtagEvent(c.id, 'x_7004@pts.local', '7004002'),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 429]);
    expect(await paidFor(c.id, 'x_7004@pts.local')).toBe(1);
  });
});
