import { type CreatedBrand, createCoreClient } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';

// Chat groups on the Integrations page (issue 22, item 5): admins and owners change a group's name and
// configuration and unlink it through the chat group service the bots' brand-signed calls use, audited with
// the portal user; the bots read the change at once. Viewers get 403, a request without the CSRF token changes
// nothing, and brand B's owner cannot touch brand A's group through either brand's path.

let platform: TestPlatform;
let brandA: CreatedBrand;
let brandB: CreatedBrand;
let ownerA: PortalBrowser;
let adminA: PortalBrowser;
let viewerA: PortalBrowser;
let ownerB: PortalBrowser;
const GROUP_A = 'discord:100200300';
const GROUP_B = 'telegram:-4004005';
const path = (brand: CreatedBrand, group: string) =>
  `/brands/${brand.brandId}/chat-groups/${encodeURIComponent(group)}`;
const botClient = (brand: CreatedBrand) =>
  createCoreClient({
    baseUrl: platform.url,
    brandId: brand.brandId,
    securityKey: brand.securityKey,
    clock: platform.clock,
  });
const groupsOf = async (browser: PortalBrowser, brand: CreatedBrand) =>
  (await browser.request('GET', `/brands/${brand.brandId}/integrations`)).body.chatGroups;

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '100000' });
  brandA = await platform.createBrand({ name: 'Brand A', domain: 'a.example.com' });
  brandB = await platform.createBrand({ name: 'Brand B', domain: 'b.example.com' });
  ownerA = await portalMember(platform, brandA.brandId, 'owner@a.example.com', 'owner');
  adminA = await portalMember(platform, brandA.brandId, 'admin@a.example.com', 'admin');
  viewerA = await portalMember(platform, brandA.brandId, 'viewer@a.example.com', 'viewer');
  ownerB = await portalMember(platform, brandB.brandId, 'owner@b.example.com', 'owner');
  await botClient(brandA).chatGroupSetup({
    securityKey: brandA.securityKey,
    platform: 'discord',
    chatGroupId: '100200300',
    groupName: 'A fans',
    setupBy: 'mod#1',
  });
  await botClient(brandB).chatGroupSetup({
    securityKey: brandB.securityKey,
    platform: 'telegram',
    chatGroupId: '-4004005',
    groupName: 'B fans',
    setupBy: 'mod#2',
  });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('portal chat groups', () => {
  it('an admin changes a group through the chat group service: the bots read it at once, the rule follows', async () => {
    const invalid = await adminA.request('PATCH', path(brandA, GROUP_A), { configMetadata: { dailyReward: -1 } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.details.errors).toEqual([
      expect.stringMatching(/^configMetadata\.dailyReward: must be at least 0/),
    ]);
    const empty = await adminA.request('PATCH', path(brandA, GROUP_A), {});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatch(/give groupName or configMetadata/);

    platform.clock.advance(1_000);
    const changed = await adminA.request('PATCH', path(brandA, GROUP_A), {
      groupName: 'A superfans',
      configMetadata: { dailyReward: 20, naturalParticipation: { enabled: false } },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.rulesUpdated).toEqual(['daily_checkin']);
    expect(changed.body.chatGroup).toMatchObject({
      chatGroupId: GROUP_A,
      groupName: 'A superfans',
      configMetadata: { dailyReward: 20, naturalParticipation: { enabled: false, gmReward: 25 } },
    });
    // What the bots read (brand-signed) and the brand's rule.
    const seen = await botClient(brandA).chatGroupGet(GROUP_A);
    expect(seen).toEqual(changed.body.chatGroup);
    const rules = (await ownerA.request('GET', `/brands/${brandA.brandId}/rules`)).body.rules as {
      eventType: string;
      rewardAmount: number;
    }[];
    expect(rules.find((rule) => rule.eventType === 'daily_checkin')?.rewardAmount).toBe(20);
    const audit = await ownerA.request('GET', `/brands/${brandA.brandId}/audit?action=chat_group.update`);
    expect(audit.body.entries.map((e: { actor: string; subject: string }) => [e.actor, e.subject])).toEqual([
      ['portal:admin@a.example.com', GROUP_A],
    ]);
  });

  it('unlinks a group: inactive for the bots and on the page, audited; a new /setup links it again', async () => {
    platform.clock.advance(1_000);
    const removed = await ownerA.request('DELETE', path(brandA, GROUP_A));
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body.chatGroup).toMatchObject({ chatGroupId: GROUP_A, isActive: false });
    expect((await botClient(brandA).chatGroupGet(GROUP_A)).isActive).toBe(false);
    expect(await groupsOf(viewerA, brandA)).toEqual([
      expect.objectContaining({ chatGroupId: GROUP_A, isActive: false }),
    ]);
    const audit = await ownerA.request('GET', `/brands/${brandA.brandId}/audit?action=chat_group.deactivate`);
    expect(audit.body.entries.map((e: { actor: string }) => e.actor)).toEqual(['portal:owner@a.example.com']);
    await botClient(brandA).chatGroupSetup({
      securityKey: brandA.securityKey,
      platform: 'discord',
      chatGroupId: '100200300',
      groupName: 'A superfans',
      setupBy: 'mod#1',
    });
    expect((await botClient(brandA).chatGroupGet(GROUP_A)).isActive).toBe(true);
  });

  it('a viewer is refused with 403, a change without the CSRF token is refused, and nothing changes', async () => {
    const before = await groupsOf(ownerA, brandA);
    for (const browser of [viewerA]) {
      const patch = await browser.request('PATCH', path(brandA, GROUP_A), { groupName: 'viewer' });
      expect(patch.status).toBe(403);
      expect(patch.body.error).toMatch(/viewer/);
      expect((await browser.request('DELETE', path(brandA, GROUP_A))).status).toBe(403);
    }
    const forged = await ownerA.request('PATCH', path(brandA, GROUP_A), { groupName: 'forged' }, { csrf: false });
    expect(forged.status).toBe(403);
    expect(forged.body.error).toMatch(/CSRF/);
    expect((await ownerA.request('DELETE', path(brandA, GROUP_A), undefined, { csrf: false })).status).toBe(403);
    expect(await groupsOf(ownerA, brandA)).toEqual(before);
  });

  it("a viewer's malformed change is answered 403 before any 400: the role is checked before the body is read", async () => {
    const brand = brandA.brandId;
    const malformed: [string, string, unknown][] = [
      ['PATCH', path(brandA, GROUP_A), { configMetadata: { dailyReward: -1 } }],
      ['PATCH', path(brandA, GROUP_A), { unknownField: true }],
      ['POST', `/brands/${brand}/perks`, { cost: 'lots' }],
      ['PATCH', `/brands/${brand}/perks/not-a-number`, []],
      ['POST', `/brands/${brand}/perks/1/constraints`, { kind: 42 }],
      ['DELETE', `/brands/${brand}/perks/x/constraints/y`, undefined],
      ['POST', `/brands/${brand}/campaigns`, { hashtag: '' }],
      ['PATCH', `/brands/${brand}/campaigns/zzz`, { endsAt: 'never' }],
      ['POST', `/brands/${brand}/drops`, {}],
      ['PATCH', `/brands/${brand}/drops/zzz`, { supply: -1 }],
      ['POST', `/brands/${brand}/drops/zzz/end`, { at: 'x' }],
      ['PUT', `/brands/${brand}/streak-settings`, { milestones: 'x' }],
      ['PUT', `/brands/${brand}/achievements`, 'not json'],
    ];
    for (const [method, route, body] of malformed) {
      const answer = await viewerA.request(method, route, body);
      expect(answer.status, `${method} ${route}: ${JSON.stringify(answer.body)}`).toBe(403);
      expect(answer.body.error).toMatch(/Your role in this brand \(viewer\) cannot do this/);
    }
    // An admin sending the same malformed change still learns what to fix.
    const admin = await adminA.request('PATCH', path(brandA, GROUP_A), { configMetadata: { dailyReward: -1 } });
    expect(admin.status).toBe(400);
  });

  it("brand B's owner cannot touch brand A's group through either brand's path (every route tried)", async () => {
    const before = await groupsOf(ownerA, brandA);
    const attempts: [string, string, unknown?][] = [
      ['PATCH', path(brandA, GROUP_A), { groupName: 'mole' }],
      ['DELETE', path(brandA, GROUP_A)],
      ['PATCH', path(brandB, GROUP_A), { groupName: 'mole' }],
      ['DELETE', path(brandB, GROUP_A)],
    ];
    for (const [method, route, body] of attempts) {
      const answer = await ownerB.request(method, route, body);
      expect(answer.status, `${method} ${route}`).toBe(404);
    }
    expect(await groupsOf(ownerA, brandA)).toEqual(before);
    // Their own group is theirs to change.
    expect((await ownerB.request('PATCH', path(brandB, GROUP_B), { groupName: 'B crew' })).status).toBe(200);
    const documented = Object.entries((await platform.get('/openapi.json')).body.paths)
      .filter(([route]) => route.includes('/chat-groups/') && route.startsWith('/portal/api'))
      .flatMap(([route, methods]) => Object.keys(methods as object).map((m) => `${m.toUpperCase()} ${route}`));
    const tried = new Set(
      attempts.map(([method]) => `${method} /portal/api/brands/{brandId}/chat-groups/{chatGroupId}`),
    );
    expect(new Set(documented)).toEqual(tried);
  });

  it("a group's reward changes only the rule's reward: the brand's 20 h daily_checkin cooldown and claim limit stay", async () => {
    await platform.setRule(brandA.brandId, {
      eventType: 'daily_checkin',
      rewardAmount: 10,
      cooldownHours: 20,
      maxClaims: 3,
    });
    await platform.setRule(brandA.brandId, {
      eventType: 'good_morning',
      rewardAmount: 5,
      cooldownHours: 12,
      maxClaims: 7,
    });
    await botClient(brandA).chatGroupSetup({
      securityKey: brandA.securityKey,
      platform: 'discord',
      chatGroupId: '777',
      groupName: 'A regulars',
      setupBy: 'mod#3',
    });
    const ruleOf = async (eventType: string) =>
      ((await ownerA.request('GET', `/brands/${brandA.brandId}/rules`)).body.rules as Record<string, unknown>[]).find(
        (rule) => rule.eventType === eventType,
      );
    const checkinBefore = await ruleOf('daily_checkin');

    platform.clock.advance(1_000);
    const changed = await adminA.request('PATCH', path(brandA, 'discord:777'), { configMetadata: { dailyReward: 15 } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.rulesUpdated).toEqual(['daily_checkin']);
    expect(await ruleOf('daily_checkin')).toEqual({ ...checkinBefore, rewardAmount: 15 });

    // A good-morning cooldown edit changes that rule's cooldown and nothing else (its reward and claims stay).
    const gm = await adminA.request('PATCH', path(brandA, 'discord:777'), {
      configMetadata: { naturalParticipation: { gmCooldownHours: 6 } },
    });
    expect(gm.status, JSON.stringify(gm.body)).toBe(200);
    expect(gm.body.rulesUpdated).toEqual(['good_morning']);
    expect(await ruleOf('good_morning')).toMatchObject({ rewardAmount: 5, cooldownHours: 6, maxClaims: 7 });
    expect(await ruleOf('daily_checkin')).toMatchObject({ rewardAmount: 15, cooldownHours: 20, maxClaims: 3 });

    // The rule changes are the admin's in the audit log, not an anonymous `chat-group-config`.
    const audit = await ownerA.request('GET', `/brands/${brandA.brandId}/audit?action=rule.set`);
    const actors = audit.body.entries.slice(0, 2).map((e: { actor: string }) => e.actor);
    expect(actors).toEqual(['portal:admin@a.example.com', 'portal:admin@a.example.com']);
  });
});
