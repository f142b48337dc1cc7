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

describe("the manual award's idempotency key (issue 33 §7)", () => {
  const path = () => `/admin/brands/${brandA.brandId}/awards`;
  const auditOf = async (eventId: string) =>
    (await ownerA.request('GET', `/brands/${brandA.brandId}/audit?action=member.award`)).body.entries.filter(
      (entry: { details: { eventId?: string } }) => entry.details.eventId === eventId,
    );

  it('12 identical parallel requests with one key give one award, audited once; repeats answer it replayed', async () => {
    platform.clock.advance(1_000);
    const earned = (await profile(MEMBER)).ledger.earned;
    const body = { member: MEMBER, amount: 9, reason: 'Parcel lost', idempotencyKey: 'award-parallel-1' };
    const answers = await Promise.all(Array.from({ length: 12 }, () => platform.post(path(), body, admin())));
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200));
    const eventIds = new Set(answers.map((answer) => answer.body.eventId));
    expect(eventIds.size).toBe(1);
    expect(answers.filter((answer) => answer.body.replayed === true)).toHaveLength(11);
    expect(answers.every((answer) => answer.body.rewardAmount === 9)).toBe(true);
    const [eventId] = [...eventIds] as [string];
    const page = await profile(MEMBER);
    expect(page.ledger.earned).toBe(earned + 9);
    expect(
      page.events.filter((event: { eventId: string; status: string }) => event.status === 'accepted'),
    ).toContainEqual(expect.objectContaining({ eventId, eventType: 'manual_award', rewardAmount: 9 }));
    expect(await auditOf(eventId)).toHaveLength(1);

    // The same key in the Idempotency-Key header is the same award.
    const { idempotencyKey: _key, ...bare } = body;
    const viaHeader = await platform.post(path(), bare, { ...admin(), 'idempotency-key': 'award-parallel-1' });
    expect(viaHeader.status, JSON.stringify(viaHeader.body)).toBe(200);
    expect(viaHeader.body).toMatchObject({ eventId, replayed: true, rewardAmount: 9 });
    await waitForMintsSettled(platform);
    expect((await profile(MEMBER)).ledger.earned).toBe(earned + 9);
  });

  it('the key with another amount, another member or from another person is 409; a bad key is 400', async () => {
    platform.clock.advance(1_000);
    const body = { member: MEMBER, amount: 4, reason: 'Sorry', idempotencyKey: 'award-once-2' };
    const first = await platform.post(path(), body, admin());
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    for (const changed of [{ amount: 5 }, { member: 'discord:424242' }]) {
      const reused = await platform.post(path(), { ...body, ...changed }, admin());
      expect(reused.status, JSON.stringify(reused.body)).toBe(409);
      expect(reused.body.error).toMatch(/Idempotency key "award-once-2" was already used for another award/);
    }
    const byOwner = await ownerA.request(
      'POST',
      `/brands/${brandA.brandId}/loyalty-members/${encodeURIComponent(MEMBER)}/awards`,
      { amount: 4, reason: 'Sorry', idempotencyKey: 'award-once-2' },
    );
    expect(byOwner.status, JSON.stringify(byOwner.body)).toBe(409);
    const spaced = await platform.post(path(), { ...body, idempotencyKey: 'has space' }, admin());
    expect(spaced.status).toBe(400);
    expect(JSON.stringify(spaced.body)).toMatch(/idempotencyKey.*printable ASCII/);
    const clash = await platform.post(path(), body, { ...admin(), 'idempotency-key': 'another-key' });
    expect(clash.status).toBe(400);
    expect(JSON.stringify(clash.body)).toMatch(/Idempotency-Key header and the body's idempotencyKey differ/);
  });

  it('12 identical parallel awards from the portal with one key give one award', async () => {
    platform.clock.advance(1_000);
    const earned = (await profile(DISCORD_MEMBER)).ledger.earned;
    const awardPath = `/brands/${brandA.brandId}/loyalty-members/${encodeURIComponent(DISCORD_MEMBER)}/awards`;
    const body = { amount: 6, reason: 'Moderated the launch', idempotencyKey: 'portal-award-3' };
    const answers = await Promise.all(Array.from({ length: 12 }, () => ownerA.request('POST', awardPath, body)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200));
    expect(new Set(answers.map((answer) => answer.body.eventId)).size).toBe(1);
    expect((await profile(DISCORD_MEMBER)).ledger.earned).toBe(earned + 6);
    expect(await auditOf(answers[0]!.body.eventId)).toHaveLength(1);
  });
});

describe('pts member award', () => {
  it('one award per --idempotency-key: a second run with the key pays nothing', async () => {
    platform.clock.advance(1_000);
    const earned = (await profile(MEMBER)).ledger.earned;
    const argv = [
      'member',
      'award',
      '--brand',
      brandA.brandId,
      '--member',
      MEMBER,
      '--amount',
      '3',
      '--reason',
      'Retry',
    ];
    const keyed = [...argv, '--idempotency-key', 'cli-award-4', '--json'];
    const first = await pts(keyed);
    expect(first.stderr).toBe('');
    const again = await pts(keyed);
    expect(JSON.parse(again.stdout)).toMatchObject({ eventId: JSON.parse(first.stdout).eventId, replayed: true });
    expect((await profile(MEMBER)).ledger.earned).toBe(earned + 3);
    const bad = await pts([...argv, '--idempotency-key', 'a b']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--idempotency-key must be printable ASCII/);
  });

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
