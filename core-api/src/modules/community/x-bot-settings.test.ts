import { type CreatedBrand, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { runCli } from '../../cli/run-cli.ts';
import { createCampaign } from './campaigns.service.ts';

const ADMIN = 'x-settings-test-admin-token-0123456789';
const HOUR = 3600 * 1000;
let platform: TestPlatform;
let brand: CreatedBrand;

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_ADMIN_TOKEN: ADMIN, PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' });
  brand = await platform.createBrand({ name: 'Handle Brand' });
});

afterAll(async () => {
  await platform?.stop();
});

async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: ADMIN },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

async function signedGet(path: string, securityKey = brand.securityKey) {
  const headers = signRequest({
    securityKey,
    method: 'GET',
    pathWithQuery: path,
    body: '',
    timestamp: Math.floor(platform.clock.now().getTime() / 1000),
  });
  const res = await fetch(`${platform.url}${path}`, { headers });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  return { status: res.status, body: (await res.json()) as any };
}

describe('pts brand set --x-handle', () => {
  it('stores the handle without @, creates the X rules the brand lacks, keeps rules it set, and clears with ""', async () => {
    await platform.setRule(brand.brandId, { eventType: 'post_mention', rewardAmount: 3, cooldownHours: 0 });
    const set = await cli('brand', 'set', '--brand', brand.brandId, '--x-handle', '@Handle_Co', '--json');
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout).xHandle).toBe('Handle_Co');
    const rules = JSON.parse((await cli('rule', 'list', '--brand', brand.brandId, '--json')).stdout).rules as {
      eventType: string;
      rewardAmount: number;
    }[];
    const byType = Object.fromEntries(rules.map((r) => [r.eventType, r.rewardAmount]));
    expect(byType).toMatchObject({
      post_mention: 3,
      post_reply: 15,
      post_quote: 75,
      post_thread_reply: 20,
      post_hashtag: 50,
      social_daily_engagement: 5,
    });

    const human = await cli('brand', 'set', '--brand', brand.brandId, '--x-handle', 'Handle_Co');
    expect(human.stdout).toContain('x handle      @Handle_Co');
    expect(human.stdout).toContain(`pts -- rule list --brand ${brand.brandId}`);
    const cleared = await cli('brand', 'set', '--brand', brand.brandId, '--x-handle', '', '--json');
    expect(JSON.parse(cleared.stdout).xHandle).toBeNull();
    await cli('brand', 'set', '--brand', brand.brandId, '--x-handle', 'Handle_Co');
  });

  it.each(['has space', 'way_too_long_handle_x', 'dash-ed'])(
    'refuses --x-handle %j and says what a handle is',
    async (value) => {
      const run = await cli('brand', 'set', '--brand', brand.brandId, '--x-handle', value);
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('1 to 15 letters, digits or _');
    },
  );
});

describe('GET /services/x-bot/:brandId/settings', () => {
  it('answers the signed brand with its handle and the campaigns overlapping [since, now]', async () => {
    const now = platform.clock.now().getTime();
    const deps = { db: platform.deps.db, clock: platform.clock };
    const ended = await createCampaign(deps, brand.brandId, {
      hashtag: '#ended',
      reward: 10,
      startDate: new Date(now - 5 * HOUR).toISOString(),
      endDate: new Date(now - 2 * HOUR).toISOString(),
    });
    const active = await createCampaign(deps, brand.brandId, {
      hashtag: '#active',
      rewardMultiplier: 2,
      startDate: new Date(now - HOUR).toISOString(),
      endDate: new Date(now + HOUR).toISOString(),
    });
    await createCampaign(deps, brand.brandId, {
      hashtag: '#future',
      reward: 10,
      startDate: new Date(now + HOUR).toISOString(),
      endDate: new Date(now + 2 * HOUR).toISOString(),
    });
    const current = await signedGet(`/services/x-bot/${brand.brandId}/settings`);
    expect(current.status).toBe(200);
    expect(current.body.xHandle).toBe('Handle_Co');
    expect(current.body.campaigns.map((c: { id: string }) => c.id)).toEqual([active.id]);
    const since = new Date(now - 3 * HOUR).toISOString();
    const wider = await signedGet(`/services/x-bot/${brand.brandId}/settings?since=${encodeURIComponent(since)}`);
    expect(wider.body.campaigns.map((c: { id: string }) => c.id)).toEqual([ended.id, active.id]);
  });

  it('refuses unsigned and wrongly signed reads, and a since older than 7 days', async () => {
    const unsigned = await fetch(`${platform.url}/services/x-bot/${brand.brandId}/settings`);
    expect(unsigned.status).toBe(401);
    const wrong = await signedGet(`/services/x-bot/${brand.brandId}/settings`, 'pts_sk_not_the_key');
    expect(wrong.status).toBe(401);
    const old = new Date(platform.clock.now().getTime() - 8 * 24 * HOUR).toISOString();
    const tooOld = await signedGet(`/services/x-bot/${brand.brandId}/settings?since=${encodeURIComponent(old)}`);
    expect(tooOld.status).toBe(400);
    expect(tooOld.body.error).toContain('since must be within the 7 days');
  });
});

describe('events naming a campaign (metadata.campaign_id)', () => {
  it('pays a signed event the campaign reward, refuses one outside the window, and ignores campaign_id unsigned', async () => {
    const now = platform.clock.now().getTime();
    const deps = { db: platform.deps.db, clock: platform.clock };
    const fixed = await createCampaign(deps, brand.brandId, {
      hashtag: '#fixed',
      reward: 40,
      startDate: new Date(now - HOUR).toISOString(),
      endDate: new Date(now + HOUR).toISOString(),
    });
    const event = (identityKey: string, metadata: Record<string, unknown>) => ({
      brandId: brand.brandId,
      eventType: 'post_hashtag',
      userEmail: identityKey,
      externalId: identityKey,
      metadata,
    });
    const paid = await platform.signedPost(
      '/pts-api/manual-event',
      event('a@example.com', { campaign_id: fixed.id }),
      brand.securityKey,
    );
    expect(paid.status).toBe(200);
    expect(paid.body.rewardAmount).toBe(40);

    const outside = await platform.signedPost(
      '/pts-api/manual-event',
      event('b@example.com', { campaign_id: fixed.id, posted_at: new Date(now + 2 * HOUR).toISOString() }),
      brand.securityKey,
    );
    expect(outside.status).toBe(400);
    expect(outside.body.error).toContain('outside the campaign');

    const unknown = await platform.signedPost(
      '/pts-api/manual-event',
      event('c@example.com', { campaign_id: 'not-a-uuid' }),
      brand.securityKey,
    );
    expect(unknown.status).toBe(400);

    // Unsigned: the campaign is not consulted, the rule's amount is paid.
    await cli('brand', 'set', '--brand', brand.brandId, '--domain', 'handle.example');
    const unsigned = await platform.post('/pts-api/manual-event', {
      ...event('d@example.com', { campaign_id: fixed.id }),
      domain: 'handle.example',
    });
    expect(unsigned.status).toBe(200);
    expect(unsigned.body.rewardAmount).toBe(50);
  });
});
