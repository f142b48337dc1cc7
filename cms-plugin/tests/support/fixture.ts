import type { CreatedBrand } from '@pts/shared';
import { startTestPlatform, type TestPlatform } from '../../../core-api/test/platform.ts';
import { freePort, startWordPress, type TestWordPress, type WordPressOptions } from './wordpress.ts';

export interface PluginFixture {
  platform: TestPlatform;
  brand: CreatedBrand;
  wordpress: TestWordPress;
  /** A URL where nothing listens (core-api "down"). */
  downUrl: string;
  createPerk(name: string, cost: number): Promise<{ perkId: number; uuid: string }>;
  stop(): Promise<void>;
}

/** Daily check-in pays 10 × multiplier; milestones pay the streak settings' bonus; site actions pay their rule; purchases 2 pts per $1. */
const RULES = [
  { eventType: 'daily_checkin', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 },
  { eventType: 'streak_milestone', rewardAmount: 0, cooldownHours: 0, maxClaims: -1 },
  { eventType: 'account_creation', rewardAmount: 100, cooldownHours: 0, maxClaims: 1 },
  { eventType: 'comment_approved', rewardAmount: 20, cooldownHours: 0, maxClaims: -1 },
  { eventType: 'post_published', rewardAmount: 30, cooldownHours: 0, maxClaims: -1 },
  { eventType: 'order_paid', rewardAmount: 50, cooldownHours: 0, maxClaims: -1 },
  // The WooCommerce order feed's purchases: 2 pts per $1.00 of the order's value (docs/shop-program.md).
  { eventType: 'purchase', rate: { pts: 2, per: '1.00', currency: 'USD' as const }, cooldownHours: 0, maxClaims: -1 },
];

/**
 * core-api on its embedded defaults (PGlite, anvil) with a brand and its rules, and a WordPress with the
 * plugin installed from its zip and configured for that brand.
 */
export async function startPluginFixture(
  wordpressOptions: Omit<WordPressOptions, 'settings'> & { settings?: Partial<WordPressOptions['settings']> },
): Promise<PluginFixture> {
  const platform = await startTestPlatform();
  let wordpress: TestWordPress | undefined;
  try {
    const brand = await platform.createBrand({ name: 'WordPress Shop', domain: '127.0.0.1' });
    for (const rule of RULES) await platform.setRule(brand.brandId, rule);
    wordpress = await startWordPress({
      ...wordpressOptions,
      settings: {
        api_url: platform.url,
        brand_id: brand.brandId.toLowerCase(),
        security_key: brand.securityKey,
        ...wordpressOptions.settings,
      },
    });
    const downUrl = `http://127.0.0.1:${await freePort()}`;
    const started = wordpress;
    return {
      platform,
      brand,
      wordpress: started,
      downUrl,
      async createPerk(name, cost) {
        const res = await platform.post(
          '/admin/perks',
          { brandId: brand.brandId, name, cost, maxPerUser: 0, category: 'rewards' },
          { authorization: `Bearer ${platform.deps.adminToken}` },
        );
        if (res.status !== 201) throw new Error(`creating perk ${name}: ${res.status} ${JSON.stringify(res.body)}`);
        return res.body.perk as { perkId: number; uuid: string };
      },
      async stop() {
        await started.stop();
        await platform.stop();
      },
    };
  } catch (error) {
    await wordpress?.stop();
    await platform.stop();
    throw error;
  }
}
