import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';
import { runCli } from '../../cli/run-cli.ts';

// The portal's manual award from the admin API and the CLI (issue 22, Members): `POST /admin/brands/:brandId/
// awards` and `pts member award` call the portal's `awardMember`, so the award is a `manual_award` event with
// its reason, minted like every reward, on the member's page, and audited as `admin`.

let platform: TestPlatform;
let brandA: { brandId: string; securityKey: string };
let brandB: { brandId: string; securityKey: string };
let ownerA: PortalBrowser;
const MEMBER = 'shopper@customer.example';
const DISCORD_MEMBER = 'discord_424242@pts.example';
const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });

function signedEvent(brand: { brandId: string; securityKey: string }, identityKey: string) {
  platform.clock.advance(61_000); // past the 60 s duplicate window
  return platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType: 'earn', userEmail: identityKey },
    brand.securityKey,
  );
}

async function pts(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

const profile = async (accountKey: string) =>
  (await ownerA.request('GET', `/brands/${brandA.brandId}/loyalty-members/${encodeURIComponent(accountKey)}`)).body;

beforeAll(async () => {
  platform = await startTestPlatform();
  const rules = [{ eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }];
  brandA = await platform.createBrand({ name: 'Brand A', domain: 'a.example.com', rules });
  brandB = await platform.createBrand({ name: 'Brand B', domain: 'b.example.com', rules });
  ownerA = await portalMember(platform, brandA.brandId, 'owner@a.example.com', 'owner');
  expect((await signedEvent(brandA, MEMBER)).status).toBe(200);
  expect((await signedEvent(brandA, DISCORD_MEMBER)).status).toBe(200);
  expect((await signedEvent(brandB, 'only-b@customer.example')).status).toBe(200);
  await waitForMintsSettled(platform);
});

afterAll(async () => {
  await platform?.stop();
});

describe('the manual award from the admin API', () => {
  it('needs the admin token and a reason; awards through the event pipeline, audited as admin', async () => {
    const path = `/admin/brands/${brandA.brandId}/awards`;
    expect((await platform.post(path, { member: MEMBER, amount: 5, reason: 'no token' })).status).toBe(401);
    const noReason = await platform.post(path, { member: MEMBER, amount: 5 }, admin());
    expect(noReason.status).toBe(400);
    expect(JSON.stringify(noReason.body)).toMatch(/reason: is required/);
    const tooMuch = await platform.post(path, { member: MEMBER, amount: 0, reason: 'zero pts' }, admin());
    expect(tooMuch.status).toBe(400);

    platform.clock.advance(1_000);
    const awarded = await platform.post(path, { member: MEMBER, amount: 40, reason: 'Late delivery' }, admin());
    expect(awarded.status, JSON.stringify(awarded.body)).toBe(200);
    expect(awarded.body).toMatchObject({ success: true, rewardAmount: 40 });
    const page = await profile(MEMBER);
    expect(page.ledger.earned).toBe(140);
    expect(page.events[0]).toMatchObject({
      eventId: awarded.body.eventId,
      eventType: 'manual_award',
      status: 'accepted',
      rewardAmount: 40,
      sentBy: 'admin',
      note: 'Late delivery',
    });
    const audit = await ownerA.request('GET', `/brands/${brandA.brandId}/audit?action=member.award`);
    expect(audit.body.entries[0]).toMatchObject({
      actor: 'admin',
      actorKind: 'admin',
      details: { amount: 40, reason: 'Late delivery', userKey: MEMBER },
    });
    await waitForMintsSettled(platform);
    expect((await profile(MEMBER)).balance).toMatchObject({ onChain: 140, pending: 0 });
  });

  it('a platform identity (discord:424242) names the member; unknown members and brands are 404', async () => {
    const path = `/admin/brands/${brandA.brandId}/awards`;
    platform.clock.advance(1_000);
    const byIdentity = await platform.post(
      path,
      { member: 'discord:424242', amount: 7, reason: 'Helped others' },
      admin(),
    );
    expect(byIdentity.status, JSON.stringify(byIdentity.body)).toBe(200);
    expect((await profile(DISCORD_MEMBER)).events[0]).toMatchObject({ eventType: 'manual_award', rewardAmount: 7 });

    const stranger = await platform.post(
      path,
      { member: 'only-b@customer.example', amount: 7, reason: 'x-brand' },
      admin(),
    );
    expect(stranger.status).toBe(404);
    const nobody = await platform.post(path, { member: 'discord:999', amount: 7, reason: 'nobody' }, admin());
    expect(nobody.status).toBe(404);
    const noBrand = await platform.post(
      `/admin/brands/0x${'ab'.repeat(20)}/awards`,
      { member: MEMBER, amount: 7, reason: 'no such brand' },
      admin(),
    );
    expect(noBrand.status).toBe(404);
  });
});

describe('pts member award', () => {
  it('--json prints the award the portal answers; bad flags are usage errors', async () => {
    platform.clock.advance(1_000);
    const run = await pts([
      'member',
      'award',
      '--brand',
      brandA.brandId,
      '--member',
      MEMBER,
      '--amount',
      '12',
      '--reason',
      'Birthday <script>alert(1)</script>',
      '--json',
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.stdout);
    expect(Object.keys(printed).sort()).toEqual(['eventId', 'mintStatus', 'rewardAmount', 'success', 'walletAddress']);
    expect(printed.rewardAmount).toBe(12);
    expect((await profile(MEMBER)).events[0]).toMatchObject({
      eventId: printed.eventId,
      sentBy: 'admin',
      note: 'Birthday <script>alert(1)</script>',
    });

    const noReason = await pts(['member', 'award', '--brand', brandA.brandId, '--member', MEMBER, '--amount', '5']);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toMatch(/--reason is required/);
    const badAmount = await pts([
      'member',
      'award',
      '--brand',
      brandA.brandId,
      '--member',
      MEMBER,
      '--amount',
      '1.5',
      '--reason',
      'half',
    ]);
    expect(badAmount.code).toBe(2);
    expect(badAmount.stderr).toMatch(/--amount must be a whole number/);
    const stranger = await pts([
      'member',
      'award',
      '--brand',
      brandA.brandId,
      '--member',
      'nobody@x.example',
      '--amount',
      '5',
      '--reason',
      'who?',
    ]);
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toMatch(/No member nobody@x.example/);
  });
});
