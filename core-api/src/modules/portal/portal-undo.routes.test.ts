import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';

// Undoing mistakes (issue 33 §11) through the real routes, on PGlite and PostgreSQL with anvil: archiving and
// restoring a rule and a perk (out of the catalogue and redemption, events refused with a reason), and blocking
// and unblocking a member (their events refused with a reason the member page shows); every change audited.

let platform: TestPlatform;
let brand: { brandId: string; securityKey: string };
let owner: PortalBrowser;
let admin: PortalBrowser;
let viewer: PortalBrowser;
const MEMBER = 'shopper@undo.example';
const OTHER = 'other@undo.example';

function signedEvent(identityKey: string, eventType = 'earn') {
  platform.clock.advance(61_000); // past the 60 s duplicate window
  return platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType, userEmail: identityKey },
    brand.securityKey,
  );
}

const auditOf = (action: string) =>
  platform.deps.db
    .selectFrom('audit_log')
    .selectAll()
    .where('brand_id', '=', brand.brandId)
    .where('action', '=', action)
    .orderBy('id')
    .execute();

const memberPath = (key: string) => `/brands/${brand.brandId}/loyalty-members/${encodeURIComponent(key)}`;

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_TRUST_PROXY: 'true' });
  brand = await platform.createBrand({
    name: 'Undo Brand',
    domain: 'undo.example.com',
    rules: [
      { eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 },
      { eventType: 'test_rule', rewardAmount: 7, cooldownHours: 0, maxClaims: -1 },
    ],
  });
  owner = await portalMember(platform, brand.brandId, 'owner@undo.example', 'owner');
  admin = await portalMember(platform, brand.brandId, 'admin@undo.example', 'admin');
  viewer = await portalMember(platform, brand.brandId, 'viewer@undo.example', 'viewer');
  for (let i = 0; i < 3; i++) expect((await signedEvent(MEMBER)).status).toBe(200);
  expect((await signedEvent(OTHER)).status).toBe(200);
  await waitForMintsSettled(platform);
});

afterAll(async () => {
  await platform?.stop();
});

describe('archiving a rule', () => {
  it('stops it earning with a reason, hides it from the active rules, and restores it paused; audited', async () => {
    const path = `/brands/${brand.brandId}/rules/test_rule`;
    expect((await viewer.request('POST', `${path}/archive`)).status).toBe(403);
    expect((await signedEvent(MEMBER, 'test_rule')).status).toBe(200);

    const archived = await admin.request('POST', `${path}/archive`);
    expect(archived.status, JSON.stringify(archived.body)).toBe(200);
    expect(archived.body.rule).toMatchObject({ eventType: 'test_rule', active: false });
    expect(archived.body.rule.archivedAt).toBe(platform.clock.now().toISOString());

    const refused = await signedEvent(MEMBER, 'test_rule');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('RULE_ARCHIVED');
    expect(refused.body.error).toMatch(/archived its test_rule rule: it earns nothing now/);
    const page = await owner.request('GET', memberPath(MEMBER));
    expect(page.body.events[0]).toMatchObject({ eventType: 'test_rule', status: 'rejected', reason: 'RULE_ARCHIVED' });
    const config = await platform.get(`/pts-api/event-config?brandId=${brand.brandId}`);
    expect(JSON.stringify(config.body)).not.toMatch(/test_rule/);

    const twice = await admin.request('POST', `${path}/archive`);
    expect(twice.status).toBe(409);
    expect(twice.body.error).toMatch(/already archived/);
    expect((await admin.request('POST', `/brands/${brand.brandId}/rules/no_such_rule/archive`)).status).toBe(404);

    const restored = await owner.request('POST', `${path}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.rule).toMatchObject({ eventType: 'test_rule', active: false });
    expect(restored.body.rule.archivedAt).toBeUndefined();
    expect((await signedEvent(MEMBER, 'test_rule')).body.code).toBe('UNKNOWN_EVENT_TYPE'); // paused
    const resumed = await owner.request('PUT', path, {
      rewardAmount: 7,
      cooldownHours: 0,
      maxClaims: -1,
      active: true,
    });
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    expect((await signedEvent(MEMBER, 'test_rule')).status).toBe(200);

    const [archive] = await auditOf('rule.archive');
    expect(archive).toMatchObject({ actor: 'portal:admin@undo.example' });
    expect(archive!.details).toMatchObject({ eventType: 'test_rule', wasActive: true });
    expect(await auditOf('rule.restore')).toHaveLength(1);
  });
});

describe('archiving a perk', () => {
  it('takes it out of the public catalogue and refuses redemptions with a reason; restore brings it back inactive', async () => {
    const created = await owner.request('POST', `/brands/${brand.brandId}/perks`, {
      name: 'Test perk made by mistake',
      cost: 10,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const perkId = created.body.perk.perkId;
    const catalogueIds = async () =>
      ((await platform.get(`/services/perks/${brand.brandId}`)).body.perks as { id: number }[]).map((perk) => perk.id);
    expect(await catalogueIds()).toContain(perkId);
    expect((await viewer.request('POST', `/brands/${brand.brandId}/perks/${perkId}/archive`)).status).toBe(403);

    const archived = await admin.request('POST', `/brands/${brand.brandId}/perks/${perkId}/archive`);
    expect(archived.status, JSON.stringify(archived.body)).toBe(200);
    expect(archived.body.perk).toMatchObject({ perkId, active: false, chainStatus: 'synced' });
    expect(archived.body.perk.archivedAt).toBeDefined();
    expect(await catalogueIds()).not.toContain(perkId);
    // The team still sees it, marked.
    const list = await viewer.request('GET', `/brands/${brand.brandId}/perks`);
    expect(list.body.perks.find((perk: { perkId: number }) => perk.perkId === perkId).archivedAt).toBeDefined();

    platform.clock.advance(1_000);
    const redeemed = await platform.signedPost(
      '/services/perks/redeem',
      { brandId: brand.brandId, perkId, userIdentifier: MEMBER },
      brand.securityKey,
    );
    expect(redeemed.status).toBe(409);
    expect(redeemed.body.details).toMatchObject({ reason: 'archived' });
    expect(redeemed.body.error).toMatch(/archived by the brand and can no longer be redeemed/);

    expect((await admin.request('POST', `/brands/${brand.brandId}/perks/${perkId}/archive`)).status).toBe(409);
    const restored = await owner.request('POST', `/brands/${brand.brandId}/perks/${perkId}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.perk).toMatchObject({ perkId, active: false });
    expect(restored.body.perk.archivedAt).toBeUndefined();
    expect(await catalogueIds()).toContain(perkId);
    const [audit] = await auditOf('perk.archive');
    expect(audit).toMatchObject({ actor: 'portal:admin@undo.example', subject: String(perkId) });
    expect(await auditOf('perk.restore')).toHaveLength(1);
  });
});

describe('blocking a member', () => {
  it("refuses the member's events with a reason the member page shows, until unblocked; audited", async () => {
    const noReason = await admin.request('POST', `${memberPath(MEMBER)}/block`, {});
    expect(noReason.status).toBe(400);
    expect(noReason.body.details.errors.join()).toMatch(/reason: is required: say why the member is blocked/);
    expect((await viewer.request('POST', `${memberPath(MEMBER)}/block`, { reason: 'fraud' })).status).toBe(403);
    expect(
      (await admin.request('POST', `${memberPath('nobody@undo.example')}/block`, { reason: 'x y z' })).status,
    ).toBe(404);

    const blocked = await admin.request('POST', `${memberPath(MEMBER)}/block`, { reason: 'Self-referral fraud' });
    expect(blocked.status, JSON.stringify(blocked.body)).toBe(200);
    expect(blocked.body.blocked).toMatchObject({
      reason: 'Self-referral fraud',
      blockedBy: 'portal:admin@undo.example',
    });

    const refused = await signedEvent(MEMBER);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('MEMBER_BLOCKED');
    expect(refused.body.error).toMatch(/blocked by the brand/);
    expect((await signedEvent(OTHER)).status).toBe(200); // only this member
    const page = await viewer.request('GET', memberPath(MEMBER));
    expect(page.body.blocked).toMatchObject({ reason: 'Self-referral fraud' });
    expect(page.body.events[0]).toMatchObject({ eventType: 'earn', status: 'rejected', reason: 'MEMBER_BLOCKED' });
    // The team's own manual award is refused too, and the page says why.
    const award = await admin.request('POST', `${memberPath(MEMBER)}/awards`, { amount: 50, reason: 'goodwill' });
    expect(award.status).toBe(403);
    expect(award.body.code).toBe('MEMBER_BLOCKED');
    const afterAward = await viewer.request('GET', memberPath(MEMBER));
    expect(afterAward.body.events[0]).toMatchObject({
      eventType: 'manual_award',
      status: 'rejected',
      reason: 'MEMBER_BLOCKED',
    });

    const unblocked = await owner.request('DELETE', `${memberPath(MEMBER)}/block`);
    expect(unblocked.status).toBe(200);
    expect(unblocked.body.blocked).toBeNull();
    expect((await signedEvent(MEMBER)).status).toBe(200);
    expect((await viewer.request('GET', memberPath(MEMBER))).body.blocked).toBeNull();
    expect((await owner.request('DELETE', `${memberPath(MEMBER)}/block`)).status).toBe(409);

    const [block] = await auditOf('member.block');
    expect(block).toMatchObject({ actor: 'portal:admin@undo.example' });
    expect(block!.details).toMatchObject({ userKey: MEMBER, reason: 'Self-referral fraud' });
    const [unblock] = await auditOf('member.unblock');
    expect(unblock).toMatchObject({ actor: 'portal:owner@undo.example' });
  });

  it('ten parallel blocks of one member: one block, one audit entry, the rest 409', async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => admin.request('POST', `${memberPath(OTHER)}/block`, { reason: 'Chargebacks' })),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(9);
    const blocks = (await auditOf('member.block')).filter(
      (entry) => (entry.details as { userKey: string }).userKey === OTHER,
    );
    expect(blocks).toHaveLength(1);
    expect((await owner.request('DELETE', `${memberPath(OTHER)}/block`)).status).toBe(200);
  });
});
