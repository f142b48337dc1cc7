import { type CreatedBrand, LINK_CODE_ALPHABET, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform, type TestResponse } from '../../../test/platform.ts';
import { readRawActivity } from '../analytics/brand-analytics.ts';
import { readRolledUpActivity } from '../analytics/brand-rollups.ts';
import { resolveAccountKey, resolveAccountKeys } from './accounts.service.ts';

let platform: TestPlatform;
let brand: CreatedBrand;
let other: CreatedBrand;
let seq = 0;
let users = 0;

const DOMAIN = 'pts.example';

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' });
  platform.clock.set('2026-04-01T10:00:00Z');
  brand = await platform.createBrand({
    domain: 'link.example',
    rules: [
      { eventType: 'daily_checkin', rewardAmount: 10, maxClaims: -1, cooldownHours: 0 },
      { eventType: 'chat_reward', rewardAmount: 7, maxClaims: -1, cooldownHours: 0 },
    ],
  });
  other = await platform.createBrand({ domain: 'other.example' });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

/** A fresh identity pair for one test: `discord_…@` and `telegram_…@` of the same person. */
function person() {
  users++;
  return {
    discord: `discord_${100_000 + users}@${DOMAIN}`,
    telegram: `telegram_${200_000 + users}@${DOMAIN}`,
  };
}

/** A signed request at the platform clock; distinct timestamps keep concurrent identical bodies distinct. */
async function signed(method: string, path: string, body: unknown, key = brand.securityKey): Promise<TestResponse> {
  const raw = body === undefined ? '' : JSON.stringify(body);
  const timestamp = Math.floor(platform.clock.now().getTime() / 1000) - (seq++ % 250);
  const headers = signRequest({ securityKey: key, method, pathWithQuery: path, body: raw, timestamp });
  const response = await fetch(`${platform.url}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: raw }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

const issue = (userIdentifier: string, b: CreatedBrand = brand) =>
  signed('POST', '/services/link/code', { brandId: b.brandId, userIdentifier }, b.securityKey);
const confirm = (userIdentifier: string, code: string, b: CreatedBrand = brand) =>
  signed('POST', '/services/link/confirm', { brandId: b.brandId, userIdentifier, code }, b.securityKey);
const account = (userIdentifier: string) =>
  signed('GET', `/services/link/${brand.brandId}/${encodeURIComponent(userIdentifier)}`, undefined);
const checkin = (userIdentifier: string, platformName: string) =>
  signed('POST', '/services/checkin', { brandId: brand.brandId, userIdentifier, platform: platformName });
const earn = (userEmail: string, n: number) =>
  signed('POST', '/pts-api/manual-event', {
    brandId: brand.brandId,
    eventType: 'chat_reward',
    userEmail,
    domain: 'link.example',
    metadata: { n },
  });

/** Issues a code on the first identity and confirms it on the second. */
async function link(first: string, second: string): Promise<TestResponse> {
  const code = await issue(first);
  expect(code.status, JSON.stringify(code.body)).toBe(200);
  return confirm(second, code.body.code);
}

describe('link codes', () => {
  it('links the confirming identity to the issuer’s account; both see one account', async () => {
    const p = person();
    const code = await issue(p.discord);
    expect(code.status).toBe(200);
    expect(code.body.code).toMatch(/^[A-HJKMNP-Z2-9]{8}$/);
    expect(code.body.accountKey).toBe(p.discord);
    expect(Date.parse(code.body.expiresAt) - platform.clock.now().getTime()).toBe(10 * 60 * 1000);
    // Stored hashed: the code itself is nowhere in the table.
    const stored = await platform.deps.db.selectFrom('link_codes').selectAll().execute();
    expect(stored.some((row) => row.code_hash === code.body.code)).toBe(false);

    // Typed by a person: lower case and a dash are forgiven.
    const typed = `${code.body.code.slice(0, 4)}-${code.body.code.slice(4).toLowerCase()}`;
    const linked = await confirm(p.telegram, typed);
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    expect(linked.body).toMatchObject({
      success: true,
      accountKey: p.discord,
      userIdentifier: p.telegram,
      alreadyLinked: false,
      previousWalletAddress: null,
      previousWalletBalance: null,
    });
    expect(linked.body.identities.map((i: { identityKey: string }) => i.identityKey)).toEqual([p.discord, p.telegram]);

    for (const who of [p.discord, p.telegram]) {
      const view = await account(who);
      expect(view.status).toBe(200);
      expect(view.body).toMatchObject({ accountKey: p.discord, walletAddress: linked.body.walletAddress });
      expect(view.body.identities).toEqual([
        { identityKey: p.discord, platform: 'discord', primary: true, method: null, linkedAt: null },
        {
          identityKey: p.telegram,
          platform: 'telegram',
          primary: false,
          method: 'code',
          linkedAt: platform.clock.now().toISOString(),
        },
      ]);
    }
    // Both users rows carry the account's wallet.
    const rows = await platform.deps.db
      .selectFrom('users')
      .select(['email', 'wallet_address'])
      .where('email', 'in', [p.discord, p.telegram])
      .execute();
    expect(rows.map((row) => row.wallet_address)).toEqual([linked.body.walletAddress, linked.body.walletAddress]);
  });

  it('a code seen by another member of the same platform cannot take over the account', async () => {
    const victim = person();
    const attacker = `telegram_${900_000 + users}@${DOMAIN}`;
    const code = (await issue(victim.telegram)).body.code;
    // The code was posted in a Telegram group; another Telegram member types it.
    const takeover = await confirm(attacker, code);
    expect(takeover.status).toBe(400);
    expect(takeover.body.details).toMatchObject({ reason: 'same_platform', platform: 'telegram' });
    expect((await account(attacker)).body.identities).toHaveLength(1);
    expect((await account(victim.telegram)).body.identities).toHaveLength(1);
    // A refused attempt burns the code: nobody else who saw it can try it next, the owner asks again.
    expect((await confirm(victim.discord, code)).body.details).toMatchObject({ reason: 'used' });
    const fresh = (await issue(victim.telegram)).body.code;
    const linked = await confirm(victim.discord, fresh);
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    expect(linked.body.identities).toHaveLength(2);
  });

  it('a refusal to a member linked elsewhere burns the code before a second member can use it (issue 24 §6)', async () => {
    // A Discord member issues a code; a Telegram member already linked to another account types it and is
    // refused; a third member types the same code next and must not join the Discord member's account.
    const victim = person();
    const linkedElsewhere = person();
    expect((await link(linkedElsewhere.discord, linkedElsewhere.telegram)).status).toBe(200);
    const code = (await issue(victim.discord)).body.code;
    const refused = await confirm(linkedElsewhere.telegram, code);
    expect(refused.status).toBe(409);
    expect(refused.body.details).toMatchObject({ reason: 'linked_elsewhere' });
    const thief = `telegram_${950_000 + users}@${DOMAIN}`;
    const second = await confirm(thief, code);
    expect(second.status).toBe(400);
    expect(second.body).toMatchObject({ code: 'INVALID_LINK_CODE', details: { reason: 'used' } });
    expect((await account(victim.discord)).body.identities).toHaveLength(1);
    expect((await account(thief)).body.identities).toHaveLength(1);
  });

  it('POST /services/link/revoke voids a live code (brand-signed, idempotent)', async () => {
    const p = person();
    const code = (await issue(p.discord)).body.code;
    const unsigned = await platform.post('/services/link/revoke', { brandId: brand.brandId, code });
    expect(unsigned.status).toBe(401);
    const otherBrand = await signed(
      'POST',
      '/services/link/revoke',
      { brandId: other.brandId, code },
      other.securityKey,
    );
    expect(otherBrand.body).toEqual({ success: true, revoked: false });
    const revoked = await signed('POST', '/services/link/revoke', { brandId: brand.brandId, code });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body).toEqual({ success: true, revoked: true });
    expect((await signed('POST', '/services/link/revoke', { brandId: brand.brandId, code })).body.revoked).toBe(false);
    expect((await confirm(p.telegram, code)).body.details).toMatchObject({ reason: 'used' });
    expect((await signed('POST', '/services/link/revoke', { brandId: brand.brandId, code: 'AB' })).status).toBe(400);
  });

  it('refuses unknown, reused, expired, replaced, other-brand and self-confirmed codes with a reason', async () => {
    const p = person();
    const third = `x_${300_000 + users}@${DOMAIN}`;
    expect((await confirm(p.telegram, 'ABCDEFGH')).body).toMatchObject({
      success: false,
      code: 'INVALID_LINK_CODE',
      details: { reason: 'unknown' },
    });
    const badFormat = await confirm(p.telegram, 'AB');
    expect(badFormat.status).toBe(400);
    expect(badFormat.body.code).toBe('VALIDATION_ERROR');

    const code = (await issue(p.discord)).body.code;
    const self = await confirm(p.discord, code);
    expect(self.status).toBe(400);
    expect(self.body.details).toMatchObject({ reason: 'self_link' });
    const otherBrand = await confirm(p.telegram, code, other);
    expect(otherBrand.status).toBe(400);
    expect(otherBrand.body.details).toMatchObject({ reason: 'unknown' });
    // The refused self-confirmation burnt the code.
    expect((await confirm(p.telegram, code)).body.details).toMatchObject({ reason: 'used' });

    const good = (await issue(p.discord)).body.code;
    expect((await confirm(p.telegram, good)).status).toBe(200);
    const reused = await confirm(third, good);
    expect(reused.status).toBe(400);
    expect(reused.body).toMatchObject({ code: 'INVALID_LINK_CODE', details: { reason: 'used' } });

    const q = person();
    const expiring = (await issue(q.discord)).body.code;
    platform.clock.advance(10 * 60 * 1000 + 1000);
    const expired = await confirm(q.telegram, expiring);
    expect(expired.status).toBe(400);
    expect(expired.body).toMatchObject({ code: 'INVALID_LINK_CODE', details: { reason: 'expired' } });

    // One active code per identity: a new one replaces the unused one.
    const first = (await issue(q.discord)).body.code;
    const second = (await issue(q.discord)).body.code;
    expect((await confirm(q.telegram, first)).body.details).toMatchObject({ reason: 'unknown' });
    expect((await confirm(q.telegram, second)).status).toBe(200);
    expect(await resolveAccountKey(platform.deps.db, q.telegram)).toBe(q.discord);
  });

  it('refuses an identity linked elsewhere (409), accepts a repeat for the same account', async () => {
    const p = person();
    const q = person();
    expect((await link(p.discord, p.telegram)).status).toBe(200);
    const elsewhere = await link(q.discord, p.telegram);
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body).toMatchObject({ code: 'CONFLICT', details: { reason: 'linked_elsewhere' } });
    expect(await resolveAccountKey(platform.deps.db, p.telegram)).toBe(p.discord);

    // Same account, either direction: no change.
    expect((await link(p.discord, p.telegram)).body).toMatchObject({ alreadyLinked: true, accountKey: p.discord });
    expect((await link(p.telegram, p.discord)).body).toMatchObject({ alreadyLinked: true, accountKey: p.discord });
  });

  it('flattens: a code issued by a linked identity joins the root account; a merged account brings its links', async () => {
    const p = person();
    const x = `x_${400_000 + users}@${DOMAIN}`;
    await link(p.discord, p.telegram);
    // The telegram identity issues; the X identity joins the discord account, not a chain through telegram.
    expect((await link(p.telegram, x)).body).toMatchObject({ accountKey: p.discord });

    const q = person();
    const github = `github_${500_000 + users}@${DOMAIN}`;
    await link(q.discord, q.telegram);
    // q.discord (an account with a link) joins github's account: q.telegram moves along.
    expect((await link(github, q.discord)).body.accountKey).toBe(github);
    const resolved = await resolveAccountKeys(platform.deps.db, [q.discord, q.telegram, github, x, 'nobody@x.io']);
    expect(Object.fromEntries(resolved)).toEqual({
      [q.discord]: github,
      [q.telegram]: github,
      [github]: github,
      [x]: p.discord,
      'nobody@x.io': 'nobody@x.io',
    });
    const chains = await platform.deps.db
      .selectFrom('account_links as a')
      .innerJoin('account_links as b', 'b.identity_key', 'a.account_key')
      .select('a.identity_key')
      .execute();
    expect(chains).toEqual([]);
  });

  it('lets exactly one of 10 concurrent confirmations of one code succeed', async () => {
    const p = person();
    const code = (await issue(p.discord)).body.code;
    const claimants = Array.from({ length: 10 }, (_, i) => `telegram_${900_000 + users * 100 + i}@${DOMAIN}`);
    const results = await Promise.all(claimants.map((who) => confirm(who, code)));
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    expect(results.filter((r) => r.status === 400 && r.body.details?.reason === 'used')).toHaveLength(9);
    const links = await platform.deps.db
      .selectFrom('account_links')
      .select('identity_key')
      .where('account_key', '=', p.discord)
      .execute();
    expect(links.map((row) => row.identity_key)).toEqual([won[0]!.body.userIdentifier]);
  });

  it('limits confirmation attempts per identity (guessing codes)', async () => {
    const guesser = `telegram_${700_000 + users++}@${DOMAIN}`;
    for (let i = 0; i < 10; i++) {
      const res = await confirm(guesser, `ABCDEF${LINK_CODE_ALPHABET[i]}${LINK_CODE_ALPHABET[i]}`);
      expect(res.body.details).toMatchObject({ reason: 'unknown' });
    }
    const limited = await confirm(guesser, 'ABCDEFGH');
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('RATE_LIMIT_EXCEEDED');
  });

  it('needs a brand signature', async () => {
    const res = await platform.post('/services/link/code', {
      brandId: brand.brandId,
      userIdentifier: `discord_1@${DOMAIN}`,
    });
    expect(res.status).toBe(401);
    expect(res.body.details).toMatchObject({ reason: 'signature_required' });
  });
});

describe('POST /services/link/email', () => {
  it('links an identity to a proven email’s account', async () => {
    const p = person();
    const email = `person${users}@example.com`;
    const res = await signed('POST', '/services/link/email', {
      brandId: brand.brandId,
      userIdentifier: p.discord,
      email: email.toUpperCase(),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ accountKey: email, userIdentifier: p.discord, alreadyLinked: false });
    expect((await account(p.discord)).body.identities).toMatchObject([
      { identityKey: email, platform: 'email', primary: true },
      { identityKey: p.discord, platform: 'discord', method: 'email' },
    ]);
    const self = await signed('POST', '/services/link/email', { brandId: brand.brandId, userIdentifier: email, email });
    expect(self.status).toBe(400);
    expect(self.body.details).toMatchObject({ reason: 'self_link' });
  });
});

describe('sharing across linked identities', () => {
  it('keeps one streak: one check-in per UTC day across platforms, continued the next day', async () => {
    const p = person();
    platform.clock.set('2026-05-01T08:00:00Z');
    expect((await link(p.discord, p.telegram)).status).toBe(200);
    const onDiscord = await checkin(p.discord, 'discord');
    expect(onDiscord.body).toMatchObject({ alreadyClaimed: false, reward: 10, streak: { currentStreak: 1 } });
    const onTelegram = await checkin(p.telegram, 'telegram');
    expect(onTelegram.body).toMatchObject({ alreadyClaimed: true, reward: 0, eventId: onDiscord.body.eventId });

    platform.clock.set('2026-05-02T09:00:00Z');
    const nextDay = await checkin(p.telegram, 'telegram');
    expect(nextDay.body).toMatchObject({ alreadyClaimed: false, reward: 10, streak: { currentStreak: 2 } });
    const status = await signed(
      'GET',
      `/services/streak/status/${brand.brandId}/${encodeURIComponent(p.discord)}`,
      undefined,
    );
    expect(status.body).toMatchObject({ currentStreak: 2, checkedInToday: true, userIdentifier: p.discord });
    // Both rewards went to the one wallet.
    expect(nextDay.body.walletAddress).toBe(onDiscord.body.walletAddress);
  });

  it('mints later rewards of a linked identity to the account wallet; reports what stays on the old one', async () => {
    const p = person();
    platform.clock.set('2026-05-10T08:00:00Z');
    const before = await earn(p.telegram, 1);
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    const oldWallet = before.body.walletAddress as string;
    await waitForMintsSettled(platform);

    const linked = await link(p.discord, p.telegram);
    expect(linked.status).toBe(200);
    const accountWallet = linked.body.walletAddress as string;
    expect(accountWallet.toLowerCase()).not.toBe(oldWallet.toLowerCase());
    expect(linked.body).toMatchObject({ previousWalletAddress: oldWallet, previousWalletBalance: 7 });

    platform.clock.advance(61_000);
    const after = await earn(p.telegram, 2);
    expect(after.status).toBe(200);
    expect(after.body.walletAddress.toLowerCase()).toBe(accountWallet.toLowerCase());
    platform.clock.advance(61_000);
    expect((await earn(p.discord, 3)).body.walletAddress.toLowerCase()).toBe(accountWallet.toLowerCase());
    await waitForMintsSettled(platform);
    expect(await tokenBalance(platform, accountWallet)).toBe(14n);
    expect(await tokenBalance(platform, oldWallet)).toBe(7n);
  });

  it('shows one leaderboard entry and one activity feed for the pair after linking', async () => {
    const p = person();
    platform.clock.set('2026-06-01T08:00:00Z');
    const early = await earn(p.telegram, 1);
    expect(early.status).toBe(200);
    await waitForMintsSettled(platform);
    await link(p.discord, p.telegram);
    for (const [n, who] of [p.discord, p.telegram, p.telegram].entries()) {
      platform.clock.advance(61_000);
      expect((await earn(who, 10 + n)).status).toBe(200);
    }
    await waitForMintsSettled(platform);

    const board = await signed(
      'GET',
      `/services/leaderboard/${brand.brandId}?metric=pts_earned&period=all&limit=100&user=${encodeURIComponent(p.telegram)}`,
      undefined,
    );
    expect(board.status).toBe(200);
    const keys = board.body.leaderboard.map((entry: { userIdentifier: string }) => entry.userIdentifier);
    expect(keys).toContain(p.discord);
    // What telegram earned before linking stays under it; everything after counts for the account.
    expect(
      board.body.leaderboard.find((e: { userIdentifier: string }) => e.userIdentifier === p.discord),
    ).toMatchObject({ value: 21 });
    expect(board.body.me).toMatchObject({ userIdentifier: p.discord, value: 21 });

    const feed = await signed('GET', `/services/activity/${brand.brandId}/${encodeURIComponent(p.discord)}`, undefined);
    expect(feed.status).toBe(200);
    expect(feed.body.items).toHaveLength(4);
    expect(feed.body.items.map((item: { platform: string }) => item.platform).sort()).toEqual([
      'discord',
      'telegram',
      'telegram',
      'telegram',
    ]);

    const achievements = await signed(
      'GET',
      `/services/achievements/${brand.brandId}/${encodeURIComponent(p.telegram)}`,
      undefined,
    );
    expect(achievements.status).toBe(200);
    const progress = await platform.deps.db
      .selectFrom('achievement_progress')
      .select(['user_key', 'value'])
      .where('type', '=', 'events_claimed')
      .where('user_key', 'in', [p.discord, p.telegram])
      .orderBy('user_key')
      .execute();
    expect(progress).toEqual([
      { user_key: p.discord, value: 3n },
      { user_key: p.telegram, value: 1n },
    ]);
  });
});

describe('POST /services/link/unlink', () => {
  const unlink = (userIdentifier: string, identityKey?: string) =>
    signed('POST', '/services/link/unlink', {
      brandId: brand.brandId,
      userIdentifier,
      ...(identityKey ? { identityKey } : {}),
    });

  it('gives the unlinked identity its own wallet back; the account keeps its wallet and balance', async () => {
    const p = person();
    platform.clock.set('2026-07-01T08:00:00Z');
    const before = await earn(p.telegram, 1);
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    const ownWallet = before.body.walletAddress as string;
    const linked = await link(p.discord, p.telegram);
    expect(linked.status).toBe(200);
    const accountWallet = linked.body.walletAddress as string;
    platform.clock.advance(61_000);
    expect((await earn(p.telegram, 2)).body.walletAddress.toLowerCase()).toBe(accountWallet.toLowerCase());

    const out = await unlink(p.telegram);
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    expect(out.body).toMatchObject({ success: true, accountKey: p.discord, unlinked: p.telegram });
    expect(out.body.walletAddress.toLowerCase()).toBe(ownWallet.toLowerCase());
    expect(out.body.identities.map((i: { identityKey: string }) => i.identityKey)).toEqual([p.discord]);

    // From now on the telegram identity is an account of its own: rewards mint to its own wallet.
    platform.clock.advance(61_000);
    const after = await earn(p.telegram, 3);
    expect(after.status).toBe(200);
    expect(after.body.walletAddress.toLowerCase()).toBe(ownWallet.toLowerCase());
    expect((await account(p.telegram)).body).toMatchObject({ accountKey: p.telegram, identities: [{ primary: true }] });
    expect((await account(p.discord)).body.identities).toHaveLength(1);
    await waitForMintsSettled(platform);
    expect(await tokenBalance(platform, accountWallet)).toBe(7n);
    expect(await tokenBalance(platform, ownWallet)).toBe(14n);
    // It can be linked again later.
    expect((await link(p.discord, p.telegram)).status).toBe(200);
  });

  it('lets an identity take another identity of its own account out; refuses one of another account', async () => {
    const p = person();
    const stranger = person();
    expect((await link(p.discord, p.telegram)).status).toBe(200);
    expect((await link(stranger.discord, stranger.telegram)).status).toBe(200);

    const foreign = await unlink(p.discord, stranger.telegram);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: 'NOT_FOUND', details: { reason: 'not_in_account' } });
    expect((await account(stranger.telegram)).body.accountKey).toBe(stranger.discord);

    const own = await unlink(p.discord, p.telegram);
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect((await account(p.telegram)).body.accountKey).toBe(p.telegram);
  });

  it('refuses the primary identity (it holds the wallet) and an identity with no link, saying why', async () => {
    const p = person();
    const alone = await unlink(p.discord);
    expect(alone.status).toBe(409);
    expect(alone.body).toMatchObject({ code: 'CONFLICT', details: { reason: 'not_linked' } });

    expect((await link(p.discord, p.telegram)).status).toBe(200);
    const primary = await unlink(p.discord);
    expect(primary.status).toBe(409);
    expect(primary.body).toMatchObject({ details: { reason: 'primary_identity', linked: [p.telegram] } });
    expect(primary.body.error).toContain(p.telegram);
    expect((await account(p.telegram)).body.accountKey).toBe(p.discord);
  });

  it('needs a brand signature', async () => {
    const p = person();
    const response = await platform.post('/services/link/unlink', {
      brandId: brand.brandId,
      userIdentifier: p.discord,
    });
    expect(response.status).toBe(401);
  });
});

describe('concurrent links (issue 34)', () => {
  // A brand of its own, so its member counts are this test's alone.
  let race: CreatedBrand;
  beforeAll(async () => {
    race = await platform.createBrand({
      name: 'Race',
      domain: 'race.example',
      rules: [{ eventType: 'chat_reward', rewardAmount: 7, maxClaims: -1, cooldownHours: 0 }],
    });
  });

  const earnAt = (userEmail: string, n: number) => {
    // Past the duplicate window (same brand, type and member): each call is a new event.
    platform.clock.advance(61_000);
    return signed(
      'POST',
      '/pts-api/manual-event',
      { brandId: race.brandId, eventType: 'chat_reward', userEmail, domain: 'race.example', metadata: { n } },
      race.securityKey,
    );
  };
  const linkEmailAt = (userIdentifier: string, email: string) =>
    signed('POST', '/services/link/email', { brandId: race.brandId, userIdentifier, email }, race.securityKey);

  /** Every identity earns once before the race (a wallet and a member row each), settled on chain. */
  async function earnedOnce(keys: string[]): Promise<Map<string, string>> {
    const wallets = new Map<string, string>();
    for (const [n, key] of keys.entries()) {
      const earned = await earnAt(key, n);
      expect(earned.status, JSON.stringify(earned.body)).toBe(200);
      wallets.set(key, (earned.body.walletAddress as string).toLowerCase());
    }
    await waitForMintsSettled(platform);
    return wallets;
  }

  /** The link table holds no chain (a row pointing at a linked identity) and no identity linked to itself. */
  async function expectFlatLinks(): Promise<void> {
    const chains = await platform.deps.db
      .selectFrom('account_links as a')
      .innerJoin('account_links as b', 'b.identity_key', 'a.account_key')
      .select(['a.identity_key', 'a.account_key'])
      .execute();
    expect(chains).toEqual([]);
    const selfLinks = await platform.deps.db
      .selectFrom('account_links')
      .select('identity_key')
      .whereRef('identity_key', '=', 'account_key')
      .execute();
    expect(selfLinks).toEqual([]);
  }

  /** The brand's members from its rollups, which must equal what its raw events say. */
  async function raceMembers(): Promise<number> {
    const now = platform.clock.now();
    const window = { from: new Date(now.getTime() - 30 * 86_400_000), to: new Date(now.getTime() + 86_400_000) };
    const rolled = await readRolledUpActivity(platform.deps.db, race.brandId, window);
    const raw = await readRawActivity(platform.deps.db, race.brandId, { ...window, days: 31 });
    expect(rolled).toEqual(raw);
    return rolled.memberCounts.total;
  }

  it('one identity confirmed into two accounts at once: exactly one wins; rows, wallets and counts stay whole', async () => {
    platform.clock.set('2026-08-01T08:00:00Z');
    // Four people, each with a Telegram identity that two accounts (Discord and GitHub) try to take at once.
    const people = Array.from({ length: 4 }, () => {
      const p = person();
      return { ...p, github: `github_${600_000 + users}@${DOMAIN}` };
    });
    const wallets = await earnedOnce(people.flatMap((p) => [p.discord, p.github, p.telegram]));
    const membersBefore = await raceMembers();
    expect(membersBefore).toBe(12);
    const codes = await Promise.all(
      people
        .flatMap((p) => [issue(p.discord, race), issue(p.github, race)])
        .map(async (answer) => {
          const issued = await answer;
          expect(issued.status, JSON.stringify(issued.body)).toBe(200);
          return issued.body.code as string;
        }),
    );
    const answers = await Promise.all(
      people.flatMap((p, i) => [
        confirm(p.telegram, codes[2 * i]!, race),
        confirm(p.telegram, codes[2 * i + 1]!, race),
      ]),
    );

    for (const [i, p] of people.entries()) {
      const pair = [answers[2 * i]!, answers[2 * i + 1]!];
      const won = pair.filter((answer) => answer.status === 200);
      expect(won, JSON.stringify(pair.map((answer) => answer.body))).toHaveLength(1);
      const lost = pair.find((answer) => answer.status !== 200)!;
      expect(lost.status, JSON.stringify(lost.body)).toBe(409);
      expect(lost.body).toMatchObject({ code: 'CONFLICT', details: { reason: 'linked_elsewhere' } });
      const winner = won[0]!.body.accountKey as string;
      const loser = winner === p.discord ? p.github : p.discord;
      expect([p.discord, p.github]).toContain(winner);

      // One link row, to the winner; the loser's account is alone; every users row of the winner's account
      // holds its wallet, the loser keeps its own.
      const rows = await platform.deps.db
        .selectFrom('account_links')
        .select(['identity_key', 'account_key'])
        .where((eb) =>
          eb.or([
            eb('identity_key', 'in', [p.telegram, p.discord, p.github]),
            eb('account_key', 'in', [p.telegram, p.discord, p.github]),
          ]),
        )
        .execute();
      expect(rows).toEqual([{ identity_key: p.telegram, account_key: winner }]);
      const users = await platform.deps.db
        .selectFrom('users')
        .select(['email', 'wallet_address'])
        .where('email', 'in', [p.telegram, p.discord, p.github])
        .execute();
      expect(users).toHaveLength(3);
      const walletOf = new Map(users.map((user) => [user.email, user.wallet_address?.toLowerCase()]));
      expect(walletOf.get(p.telegram)).toBe(wallets.get(winner));
      expect(walletOf.get(loser)).toBe(wallets.get(loser));
      // Used codes: the winner's by the Telegram identity, the loser's burned by its refusal.
      expect((await account(p.telegram)).body).toMatchObject({ accountKey: winner, walletAddress: expect.any(String) });
    }
    await expectFlatLinks();

    // Balances: what each identity earned before stays on its wallet; a later reward of the Telegram identity
    // mints to the winner's wallet; the counts are accounts (each Telegram identity joined one account).
    for (const [n, p] of people.entries()) {
      const earned = await earnAt(p.telegram, 100 + n);
      expect(earned.status, JSON.stringify(earned.body)).toBe(200);
    }
    await waitForMintsSettled(platform);
    for (const [i, p] of people.entries()) {
      const winner = answers[2 * i]!.status === 200 ? p.discord : p.github;
      const loser = winner === p.discord ? p.github : p.discord;
      expect(await tokenBalance(platform, wallets.get(winner)!)).toBe(14n);
      expect(await tokenBalance(platform, wallets.get(loser)!)).toBe(7n);
      expect(await tokenBalance(platform, wallets.get(p.telegram)!)).toBe(7n);
    }
    expect(await raceMembers()).toBe(8);
  });

  it('two identities into one account at once both join it; two accounts joining each other at once make one', async () => {
    platform.clock.set('2026-08-02T08:00:00Z');
    const email = `shared-${users}@example.com`;
    const p = person();
    // Crossed: each of two e-mail accounts asks to join the other at the same moment.
    const [left, right] = [`left-${users}@example.com`, `right-${users}@example.com`];
    const wallets = await earnedOnce([email, p.discord, p.telegram, left, right]);
    const membersBefore = await raceMembers();

    const [first, second, crossA, crossB] = await Promise.all([
      linkEmailAt(p.discord, email),
      linkEmailAt(p.telegram, email),
      linkEmailAt(left, right),
      linkEmailAt(right, left),
    ]);
    for (const answer of [first, second]) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toMatchObject({ accountKey: email, alreadyLinked: false });
    }
    expect(
      (await account(p.discord)).body.identities.map((i: { identityKey: string }) => i.identityKey).sort(),
    ).toEqual([email, p.discord, p.telegram].sort());
    // Of the crossed pair exactly one made the link; the other found the two already one account.
    expect([crossA.status, crossB.status]).toEqual([200, 200]);
    expect([crossA.body.alreadyLinked, crossB.body.alreadyLinked].sort()).toEqual([false, true]);
    expect(crossA.body.accountKey).toBe(crossB.body.accountKey);
    const root = crossA.body.accountKey as string;
    const joined = root === left ? right : left;
    const crossRows = await platform.deps.db
      .selectFrom('account_links')
      .select(['identity_key', 'account_key'])
      .where((eb) => eb.or([eb('identity_key', 'in', [left, right]), eb('account_key', 'in', [left, right])]))
      .execute();
    expect(crossRows).toEqual([{ identity_key: joined, account_key: root }]);
    await expectFlatLinks();

    // One wallet for each account from now on; the counts lose the three identities that joined.
    for (const [n, key] of [p.discord, p.telegram, joined].entries()) {
      const earned = await earnAt(key, 200 + n);
      expect(earned.status, JSON.stringify(earned.body)).toBe(200);
    }
    await waitForMintsSettled(platform);
    expect(await tokenBalance(platform, wallets.get(email)!)).toBe(21n);
    expect(await tokenBalance(platform, wallets.get(root)!)).toBe(14n);
    for (const key of [p.discord, p.telegram, joined]) expect(await tokenBalance(platform, wallets.get(key)!)).toBe(7n);
    expect(await raceMembers()).toBe(membersBefore - 3);
  });
});
