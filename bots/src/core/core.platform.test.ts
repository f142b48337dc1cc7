import { randomUUID } from 'node:crypto';
import { type CreatedBrand, createCoreClient } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../core-api/test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../core-api/test/platform.ts';
import { memoryGroupStore, testDeps } from '../../test/helpers.ts';
import { createCommandRegistry } from './registry.ts';
import type { BotDeps, ChatPlace, ChatUser } from './types.ts';

// The command core against the real core-api (PGlite + anvil, our contracts), through the typed client:
// /setup, /daily (pays and mints), /streak, /reward (brand-signed chat_manual_reward) and /claim.

let platform: TestPlatform;
let brand: CreatedBrand;
let deps: BotDeps;

const admin: ChatUser = { platform: 'discord', id: '100000000000000001', displayName: 'Admin' };
const member: ChatUser = { platform: 'discord', id: '100000000000000002', displayName: 'Mia' };
const place: ChatPlace = {
  platform: 'discord',
  groupId: '900000000000000001',
  groupName: 'Guild',
  channelId: '800000000000000001',
};

function run(user: ChatUser, name: string, args = '', isAdmin = false, roles?: string[]) {
  platform.clock.advance(1_000); // fresh signature timestamps
  return createCommandRegistry(deps).dispatch(name, args, {
    user,
    place,
    isAdmin: async () => isAdmin,
    ...(roles ? { memberRoles: async () => roles } : {}),
  });
}

async function createPerk(cost: number) {
  const res = await platform.post(
    '/admin/perks',
    { brandId: brand.brandId, name: `Perk ${randomUUID().slice(0, 8)}`, cost, maxPerUser: 1 },
    { authorization: `Bearer ${platform.deps.adminToken}` },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.perk as { perkId: number; name: string };
}

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({ name: 'Core Brand' });
  deps = testDeps(
    (credentials) =>
      createCoreClient({
        baseUrl: platform.url,
        brandId: credentials.brandId,
        securityKey: credentials.securityKey,
        clock: platform.clock,
      }),
    { clock: platform.clock, groups: memoryGroupStore() },
  );
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('command core against core-api', () => {
  it('/setup refuses a wrong key, then links the group with the default configuration', async () => {
    expect((await run(admin, 'setup', `${brand.brandId} pts_sk_wrong`, true))?.text).toMatch(
      /brand id or the security key is wrong/,
    );
    const reply = await run(admin, 'setup', `${brand.brandId} ${brand.securityKey}`, true);
    expect(reply?.text).toMatch(/now linked/);
    expect(reply?.fields?.[0]).toEqual({ name: 'Daily reward', value: '10 pts', inline: true });
    expect((await run(admin, 'config', '', true))?.fields?.find((f) => f.name === 'welcome')?.value).toBe('50 pts');
  });

  it('/daily pays and mints; /streak shows it', async () => {
    expect((await run(member, 'daily'))?.text).toMatch(/Checked in: \+10 pts/);
    await waitForMintsSettled(platform);
    const client = deps.coreClient({ brandId: brand.brandId, securityKey: brand.securityKey });
    const wallet = (await client.pregenerateUser(`discord_${member.id}@pts.local`)).wallet_address;
    expect(await tokenBalance(platform, wallet)).toBe(10n);
    const streak = await run(member, 'streak');
    expect(streak?.fields?.slice(0, 3).map((f) => f.value)).toEqual(['1 day(s)', '1 day(s)', '×1']);
    expect(streak?.text).toBe('You checked in today.');
  });

  it('/reward needs the brand rule, then pays its amount bypassing the cooldown', async () => {
    expect((await run(admin, 'reward', `<@${member.id}> 25`, true))?.text).toMatch(/no "chat_manual_reward" rule/);
    await platform.setRule(brand.brandId, {
      eventType: 'chat_manual_reward',
      rewardAmount: 25,
      cooldownHours: 24,
      maxClaims: 1,
    });
    platform.clock.advance(6_000); // the rule cache
    expect((await run(admin, 'reward', `<@${member.id}> 25`, true))?.text).toBe(
      `Rewarded <@${member.id}> with 25 pts.`,
    );
    expect((await run(admin, 'reward', `${member.id} 40`, true))?.text).toMatch(
      /with 25 pts \(pts pays the amount of the brand's chat_manual_reward rule, not the 40 asked for\)/,
    );
    expect((await run(member, 'reward', `${member.id} 40`, false))?.text).toBe('Only group admins can use /reward.');
    await waitForMintsSettled(platform);
    expect((await run(member, 'balance'))?.text).toBe('You have 60 pts to spend.');
  });

  it('/claim buys a perk it can afford and says how much is missing otherwise', async () => {
    const cheap = await createPerk(30);
    const dear = await createPerk(1000);
    expect((await run(member, 'perks'))?.fields?.map((f) => f.name)).toEqual(
      expect.arrayContaining([`#${cheap.perkId} ${cheap.name}`]),
    );
    expect((await run(member, 'claim', String(cheap.perkId)))?.text).toMatch(
      new RegExp(`You claimed ${cheap.name} for 30 pts`),
    );
    expect((await run(member, 'buy', String(dear.perkId)))?.text).toBe(
      'You need 970 more pts for this perk (you have 30 to spend).',
    );
    expect((await run(member, 'claim', String(cheap.perkId)))?.text).toBe(
      'You have already claimed this perk as many times as allowed.',
    );
  });

  it('an archived perk leaves /perks and /claim refuses it with the reason; restored (and activated) it is back', async () => {
    const mistake = await createPerk(1);
    const names = async () => ((await run(member, 'perks'))?.fields ?? []).map((f) => f.name);
    expect(await names()).toContain(`#${mistake.perkId} ${mistake.name}`);
    const admin = { authorization: `Bearer ${platform.deps.adminToken}` };
    const archived = await platform.post(`/admin/perks/${mistake.perkId}/archive`, {}, admin);
    expect(archived.status, JSON.stringify(archived.body)).toBe(200);
    expect(await names()).not.toContain(`#${mistake.perkId} ${mistake.name}`);
    expect((await run(member, 'claim', String(mistake.perkId)))?.text).toBe(
      'The brand has withdrawn that perk; see /perks for the list.',
    );
    expect((await platform.post(`/admin/perks/${mistake.perkId}/restore`, {}, admin)).status).toBe(200);
    const activated = await fetch(`${platform.url}/admin/perks/${mistake.perkId}`, {
      method: 'PATCH',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ active: true }),
    });
    expect(activated.status).toBe(200);
    expect(await names()).toContain(`#${mistake.perkId} ${mistake.name}`);
  });

  it('a chat_role perk: the member’s roles travel with /perks and /claim, so only a member with the role gets it', async () => {
    const vipRole = '700000000000000001';
    const perk = await createPerk(5);
    const constraint = await platform.post(
      `/admin/perks/${perk.perkId}/constraints`,
      { kind: 'chat_role', platform: 'discord', guildId: place.groupId, role: vipRole },
      { authorization: `Bearer ${platform.deps.adminToken}` },
    );
    expect(constraint.status, JSON.stringify(constraint.body)).toBe(201);
    const vip: ChatUser = { platform: 'discord', id: '100000000000000007', displayName: 'Vi' };
    const plain: ChatUser = { platform: 'discord', id: '100000000000000008', displayName: 'Pa' };
    for (const user of [vip, plain]) expect((await run(user, 'daily'))?.text).toMatch(/Checked in/);
    await waitForMintsSettled(platform);

    // Without the role (the bot reports the roles it reads): refused.
    expect((await run(plain, 'claim', String(perk.perkId), false, ['700000000000000002']))?.text).toBe(
      'You are not eligible for this perk.',
    );
    // Roles never reported (an adapter that cannot read them): refused, core-api knows nothing.
    expect((await run(vip, 'claim', String(perk.perkId)))?.text).toBe('You are not eligible for this perk.');
    // /perks reports the role; the claim then passes.
    await run(vip, 'perks', '', false, [vipRole]);
    const stored = await platform.deps.db
      .selectFrom('chat_member_roles')
      .select(['roles', 'guild_id'])
      .where('platform_user_id', '=', vip.id)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ roles: [vipRole], guild_id: place.groupId });
    expect((await run(vip, 'claim', String(perk.perkId), false, [vipRole]))?.text).toMatch(
      new RegExp(`You claimed ${perk.name} for 5 pts`),
    );
  });
});
