import { type CreatedBrand, createCoreClient } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';
import { SEED_TOOLS } from '../../agent/mcp/seed-tools.ts';

// Drops and chat groups in the brand's audit log (issue 22, item 7): a drop made in the portal, through the
// brand-signed services and by the MCP `create_drop` tool; a chat group set up, changed and deactivated by
// the bots (their `/setup` with the brand's key, then brand-signed calls) — each in the brand's log with
// its actor, nothing in another brand's; a group that moves to another brand leaves an entry in both.

let platform: TestPlatform;
let shop: CreatedBrand;
let other: CreatedBrand;
let owner: PortalBrowser;
let otherOwner: PortalBrowser;
const GROUP = 'discord:777000111';

type Entry = {
  actor: string;
  actorKind: string;
  action: string;
  subject: string | null;
  details: Record<string, unknown>;
};
async function audit(browser: PortalBrowser, brandId: string, query = '') {
  const answer = await browser.request('GET', `/brands/${brandId}/audit${query}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.entries as Entry[];
}
const inHours = (hours: number) => new Date(platform.clock.now().getTime() + hours * 3600_000).toISOString();
const botClient = (brand: CreatedBrand) =>
  createCoreClient({
    baseUrl: platform.url,
    brandId: brand.brandId,
    securityKey: brand.securityKey,
    clock: platform.clock,
  });

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '100000' });
  shop = await platform.createBrand({ name: 'shop', domain: 'shop.example.com' });
  other = await platform.createBrand({ name: 'other', domain: 'other.example.com' });
  owner = await portalMember(platform, shop.brandId, 'owner@shop.example.com', 'owner');
  otherOwner = await portalMember(platform, other.brandId, 'owner@other.example.com', 'owner');
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('drops in the audit log', () => {
  it('a drop made in the portal, by the brand-signed API and by the MCP tool each names its actor', async () => {
    const portal = await owner.request('POST', `/brands/${shop.brandId}/drops`, {
      name: 'Portal drop',
      amount: 10,
      totalSupply: 5,
      endsAt: inHours(1),
    });
    expect(portal.status, JSON.stringify(portal.body)).toBe(201);
    const signed = await platform.signedPost(
      '/services/drops/create',
      { brandId: shop.brandId, name: 'Signed drop', amount: 20, totalSupply: 3, endsAt: inHours(2) },
      shop.securityKey,
    );
    expect(signed.status, JSON.stringify(signed.body)).toBe(201);
    const tool = SEED_TOOLS.find((spec) => spec.name === 'create_drop')!;
    const mcp = (await tool.run(
      {
        brandId: shop.brandId,
        serviceDomain: platform.deps.config.PTS_SERVICE_DOMAIN,
        client: botClient(shop),
        http: () => Promise.reject(new Error('not used')),
      },
      { platform: 'discord', serverId: '42', eventType: 'mcp_drop', reward: 30, maxClaims: 4, expiresInSeconds: 3600 },
    )) as { dropId: string };

    const drops = (await audit(owner, shop.brandId, '?action=drop.')).reverse();
    expect(drops.map((e) => [e.actorKind, e.actor, e.action, e.subject])).toEqual([
      ['portal', 'portal:owner@shop.example.com', 'drop.create', portal.body.drop.dropId],
      ['brand', 'brand-key', 'drop.create', signed.body.drop.dropId],
      ['brand', 'brand-key', 'drop.create', mcp.dropId],
    ]);
    expect(drops.map((e) => [e.details.name, e.details.amount, e.details.totalSupply])).toEqual([
      ['Portal drop', 10, 5],
      ['Signed drop', 20, 3],
      ['mcp_drop', 30, 4],
    ]);
    // The drop_claim rule the first drop created is audited too, and nothing shows in the other brand's log.
    expect((await audit(owner, shop.brandId, '?action=rule.set')).map((e) => e.details.eventType)).toContain(
      'drop_claim',
    );
    expect(await audit(otherOwner, other.brandId, '?action=drop.')).toEqual([]);
  });
});

describe('chat groups in the audit log', () => {
  it("the bots' /setup, a signed change and a deactivation are in the brand's log; a move shows in both", async () => {
    const bot = botClient(shop);
    await bot.chatGroupSetup({
      securityKey: shop.securityKey,
      platform: 'discord',
      chatGroupId: '777000111',
      groupName: 'Shop fans',
      setupBy: 'mod#1',
    });
    platform.clock.advance(1_000);
    await bot.chatGroupUpdate(GROUP, { configMetadata: { dailyReward: 15 } });
    platform.clock.advance(1_000);
    await bot.chatGroupDeactivate(GROUP);
    platform.clock.advance(1_000);
    await botClient(other).chatGroupSetup({
      securityKey: other.securityKey,
      platform: 'discord',
      chatGroupId: '777000111',
      groupName: 'Now elsewhere',
      setupBy: 'mod#2',
    });

    const shopLog = (await audit(owner, shop.brandId, '?action=chat_group.')).reverse();
    expect(shopLog.map((e) => [e.actorKind, e.actor, e.action, e.subject])).toEqual([
      ['brand', 'brand-key', 'chat_group.setup', GROUP],
      ['brand', 'brand-key', 'chat_group.update', GROUP],
      ['brand', 'brand-key', 'chat_group.deactivate', GROUP],
      ['brand', 'brand-key', 'chat_group.unlink', GROUP],
    ]);
    expect(shopLog[0]!.details).toMatchObject({ groupName: 'Shop fans', setupBy: 'mod#1', created: true });
    expect(shopLog[1]!.details).toMatchObject({ configMetadata: { dailyReward: 15 }, rulesUpdated: ['daily_checkin'] });
    // The old brand is not told where the group went; the new brand's log has its own setup.
    expect(JSON.stringify(shopLog)).not.toContain(other.brandId);
    const otherLog = await audit(otherOwner, other.brandId, '?action=chat_group.');
    expect(otherLog.map((e) => [e.actor, e.action, e.details.groupName, e.details.created])).toEqual([
      ['brand-key', 'chat_group.setup', 'Now elsewhere', false],
    ]);
    expect(JSON.stringify(await audit(owner, shop.brandId))).not.toContain(shop.securityKey);
  });
});
