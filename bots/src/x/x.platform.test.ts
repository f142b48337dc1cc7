import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreatedBrand } from '@pts/shared';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../../core-api/src/cli/run-cli.ts';
import { startTestPlatform, type TestPlatform } from '../../../core-api/test/platform.ts';
import { type FakeXApi, type FakeXPost, startFakeXApi } from '../../test/fakes/x-api.ts';
import { type RunningXBot, startXBot } from './app.ts';
import { loadXBotConfig } from './config.ts';

// The real twitter-api-v2 client against a local fake X API, over the real core-api (PGlite + anvil),
// through several polls: what a brand running `npm run bot:x` sees.

const ADMIN = 'x-bot-test-core-admin-token-0123456789';
const BEARER = 'AAAA-fake-bearer-token';
const BOT_ADMIN = 'x-bot-admin-token-0123456789abcdef';
const HOUR = 3600 * 1000;
const BRAND_X = { id: '1000', username: 'PtsBrand', name: 'Pts Brand' };
const alice = { id: '2001', username: 'alice', name: 'Alice' };
const bob = { id: '2002', username: 'bob', name: 'Bob' };
const carol = { id: '2003', username: 'carol', name: 'Carol' };
const dave = { id: '2004', username: 'dave', name: 'Dave' };
const eve = { id: '2005', username: 'eve', name: 'Eve' };
const frank = { id: '2006', username: 'frank', name: 'Frank' };
const gina = { id: '2007', username: 'gina', name: 'Gina' };

let platform: TestPlatform;
let brand: CreatedBrand;
let x: FakeXApi;
let bot: RunningXBot;
let dataDir: string;
let coreRefuses = false;
// 18-digit ids that become 19-digit ones inside the first run: compared as strings, the newest
// (1000000000000000000) would look older than 999999999999999999.
let nextId = 999_999_999_999_999_996n;

function post(author: { id: string }, text: string, extra: Partial<FakeXPost> = {}): FakeXPost {
  const id = String(nextId++);
  const created: FakeXPost = { id, authorId: author.id, text, createdAt: platform.clock.now().toISOString(), ...extra };
  x.addPost(created);
  return created;
}

async function startBot(tier = 'basic', pollCron = '0 0 1 1 *'): Promise<RunningXBot> {
  const config = loadXBotConfig({
    PTS_CORE_API_URL: platform.url,
    PTS_BRAND_ID: brand.brandId,
    PTS_BRAND_SECURITY_KEY: brand.securityKey,
    X_BEARER_TOKEN: BEARER,
    X_API_ROOT: x.url,
    X_POLL_CRON: pollCron,
    X_BOT_ADMIN_TOKEN: BOT_ADMIN,
    X_API_TIER: tier,
    BOT_DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
  });
  return startXBot(config, {
    clock: platform.clock,
    logger: pino({ level: process.env.PTS_TEST_LOG_LEVEL ?? 'silent' }),
    coreRetries: 0,
    // "core-api refuses": the event endpoint's connection fails while the flag is set.
    fetch: (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (coreRefuses && url.includes('/pts-api/manual-event')) {
        return Promise.reject(new TypeError('fetch failed: connect ECONNREFUSED'));
      }
      return fetch(input, init);
    },
  });
}

const admin = { authorization: `Bearer ${BOT_ADMIN}` };

async function trigger() {
  const res = await fetch(`${bot.url}/trigger`, { method: 'POST', headers: admin });
  expect(res.status).toBe(200);
  // biome-ignore lint/suspicious/noExplicitAny: the poll summary is read field by field
  return ((await res.json()) as any).poll;
}

// biome-ignore lint/suspicious/noExplicitAny: health is read field by field
async function health(): Promise<any> {
  return (await fetch(`${bot.url}/health`)).json();
}

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

/** Accepted events of the brand for a post, as core-api stored them. */
async function eventsFor(postId: string, status: 'accepted' | 'rejected' = 'accepted') {
  const rows = await platform.deps.db
    .selectFrom('events')
    .select(['event_type', 'reward_amount', 'user_email', 'metadata', 'reason'])
    .where('brand_id', '=', brand.brandId)
    .where('status', '=', status)
    .execute();
  return rows.filter((r) => (r.metadata as Record<string, unknown>).post_id === postId);
}

async function acceptedCount() {
  const row = await platform.deps.db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('brand_id', '=', brand.brandId)
    .where('status', '=', 'accepted')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const mentionsRequests = () => x.requests.filter((r) => r.path.endsWith('/mentions'));

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_ADMIN_TOKEN: ADMIN, PTS_RATE_LIMIT_IP_PER_MINUTE: '10000' });
  brand = await platform.createBrand({ name: 'X Brand' });
  x = await startFakeXApi({ bearerToken: BEARER });
  for (const user of [BRAND_X, alice, bob, carol, dave, eve, frank, gina]) x.addUser(user);
  dataDir = mkdtempSync(join(tmpdir(), 'pts-x-bot-'));
  bot = await startBot();
}, 120_000);

afterAll(async () => {
  await bot?.stop();
  await x?.close();
  await platform?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('X bot end to end', () => {
  it('serves GET / and /health openly, and refuses /config, /trigger and /reset without the admin token', async () => {
    const info = await fetch(`${bot.url}/`);
    expect(info.status).toBe(200);
    expect(await info.json()).toMatchObject({ service: 'pts-x-bot', brand_id: brand.brandId });
    expect(await health()).toMatchObject({ status: 'ok', service: 'pts-x-bot', brand_id: brand.brandId });
    for (const [method, path] of [
      ['GET', '/config'],
      ['POST', '/trigger'],
      ['POST', '/reset'],
    ] as const) {
      const attempts: Record<string, string>[] = [
        {},
        { authorization: 'Bearer wrong-token-of-some-length' },
        { authorization: BOT_ADMIN },
      ];
      for (const headers of attempts) {
        const res = await fetch(`${bot.url}${path}`, { method, headers });
        expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401);
      }
    }
    expect(x.requests).toHaveLength(0);
    const config = await fetch(`${bot.url}/config`, { headers: admin });
    expect(config.status).toBe(200);
    const text = await config.text();
    expect(text).not.toContain(BEARER);
    expect(text).not.toContain(brand.securityKey);
    expect(text).not.toContain(BOT_ADMIN);
    expect(JSON.parse(text)).toMatchObject({ x_bearer_token: '[redacted]', poll_cron: '0 0 1 1 *' });
  });

  it('skips the poll while the brand has no X handle, and /health says how to set one', async () => {
    const poll = await trigger();
    expect(poll.status).toBe('skipped');
    const body = await health();
    expect(body.skipped_because).toContain(`pts -- brand set --brand ${brand.brandId} --x-handle NAME`);
    expect(x.requests).toHaveLength(0);

    const set = await cli('brand', 'set', '--brand', brand.brandId, '--x-handle', '@PtsBrand', '--json');
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ xHandle: 'PtsBrand' });
    // The X rules the brand lacked were created with the bot's defaults.
    const rules = JSON.parse((await cli('rule', 'list', '--brand', brand.brandId, '--json')).stdout).rules;
    const quote = rules.find((r: { eventType: string }) => r.eventType === 'post_quote');
    expect(quote).toMatchObject({ rewardAmount: 75, cooldownHours: 24, maxClaims: 10 });
    expect(rules.find((r: { eventType: string }) => r.eventType === 'post_thread_reply')).toMatchObject({
      rewardAmount: 20,
    });
  });

  it('first run: rewards only the 3 most recent mentions, then sets the mark', async () => {
    const older = [post(alice, 'hi @PtsBrand'), post(bob, '@PtsBrand hello')];
    const recent = [post(carol, 'gm @PtsBrand'), post(dave, '@ptsbrand nice'), post(alice, 'again @PtsBrand')];
    const poll = await trigger();
    expect(poll).toMatchObject({ status: 'ok', fetched: 3, requestsUsed: 3, postHandle: 'PtsBrand' });
    // users lookup + mentions + one search
    expect(x.requests.map((r) => r.path)).toEqual([
      '/2/users/by/username/PtsBrand',
      `/2/users/${BRAND_X.id}/mentions`,
      '/2/tweets/search/recent',
    ]);
    expect(mentionsRequests()[0]!.query).toMatchObject({ max_results: '5' });
    expect(mentionsRequests()[0]!.query.since_id).toBeUndefined();
    for (const p of older) expect(await eventsFor(p.id)).toEqual([]);
    for (const p of recent) {
      const events = await eventsFor(p.id);
      expect(events.map((e) => e.event_type).sort()).toEqual(['post_mention', 'social_daily_engagement']);
      const mention = events.find((e) => e.event_type === 'post_mention')!;
      expect(Number(mention.reward_amount)).toBe(10);
      const author = [alice, carol, dave].find((u) => u.id === p.authorId)!;
      expect(mention.user_email).toBe(`x_${author.id}@pts.local`);
      expect(mention.metadata).toMatchObject({
        displayName: `@${author.username}`,
        streak_multiplier: 1,
        current_streak: 1,
      });
    }
    expect((await health()).requests_used).toBe(3);
  });

  it('never rewards a post twice across polls; ids are compared as numbers, not strings', async () => {
    const before = await acceptedCount();
    const newer = post(bob, 'still here @PtsBrand');
    const first = await trigger();
    expect(first).toMatchObject({ status: 'ok', fetched: 1, rewarded: 2, requestsUsed: 2 });
    // The first run's mark is its newest post, the 19-digit one.
    expect(mentionsRequests().at(-1)!.query.since_id).toBe('1000000000000000000');
    const again = await trigger();
    expect(again).toMatchObject({ status: 'ok', fetched: 0, rewarded: 0 });
    expect(mentionsRequests().at(-1)!.query.since_id).toBe(newer.id);
    expect(await acceptedCount()).toBe(before + 2);
  });

  let brandPost: FakeXPost;
  it('pays a reply to the brand as post_reply (not also a mention) and a reply in its thread as post_thread_reply', async () => {
    brandPost = post(BRAND_X, 'New drop today');
    const reply = post(carol, '@PtsBrand love it', {
      inReplyToUserId: BRAND_X.id,
      conversationId: brandPost.id,
      referencedTweets: [{ type: 'replied_to', id: brandPost.id }],
    });
    const threadReply = post(dave, '@carol @PtsBrand agreed', {
      inReplyToUserId: carol.id,
      conversationId: brandPost.id,
      referencedTweets: [{ type: 'replied_to', id: reply.id }],
    });
    const ownMention = post(BRAND_X, 'we are @PtsBrand');
    const poll = await trigger();
    expect(poll.status).toBe('ok');
    expect((await eventsFor(reply.id)).map((e) => e.event_type).sort()).toEqual(['post_reply']);
    // carol's daily engagement was paid on her first post today: this one is a duplicate of it.
    expect(poll.duplicates).toBeGreaterThanOrEqual(1);
    const thread = await eventsFor(threadReply.id);
    expect(thread.map((e) => e.event_type)).toContain('post_thread_reply');
    expect(Number(thread.find((e) => e.event_type === 'post_thread_reply')!.reward_amount)).toBe(20);
    expect(await eventsFor(ownMention.id)).toEqual([]);
    expect(await eventsFor(ownMention.id, 'rejected')).toEqual([]);
  });

  it("pays a quote of the brand's post 75 once; a second quote inside 24 h is refused and not retried", async () => {
    const quote = post(alice, 'look at this', {
      referencedTweets: [{ type: 'quoted', id: brandPost.id }],
      urls: [`https://x.com/PtsBrand/status/${brandPost.id}`],
    });
    const poll = await trigger();
    expect(poll.status).toBe('ok');
    const events = await eventsFor(quote.id);
    expect(events.map((e) => e.event_type)).toEqual(['post_quote']);
    expect(Number(events[0]!.reward_amount)).toBe(75);
    const search = x.requests.filter((r) => r.path === '/2/tweets/search/recent').at(-1)!;
    expect(search.query.query).toBe(
      '(url:"x.com/PtsBrand/status" OR url:"twitter.com/PtsBrand/status") -from:PtsBrand -is:retweet',
    );

    const second = post(alice, 'and again', {
      referencedTweets: [{ type: 'quoted', id: brandPost.id }],
      urls: [`https://twitter.com/PtsBrand/status/${brandPost.id}`],
    });
    const refused = await trigger();
    expect(refused).toMatchObject({ status: 'ok', refused: 1, rewarded: 0 });
    const quoteRefusals = async () =>
      (await eventsFor(second.id, 'rejected')).filter((e) => e.event_type === 'post_quote').map((e) => e.reason);
    expect(await quoteRefusals()).toEqual(['COOLDOWN_ACTIVE']);
    await trigger();
    expect(await quoteRefusals()).toEqual(['COOLDOWN_ACTIVE']);
  });

  it('pays hashtag posts made inside the campaign window (start included, end excluded), once per user, never the brand', async () => {
    const start = new Date(platform.clock.now().getTime() + HOUR);
    const end = new Date(start.getTime() + 2 * HOUR);
    const created = await cli(
      'campaign',
      'create',
      '--brand',
      brand.brandId,
      '--hashtag',
      '#PtsDrop',
      '--reward',
      '40',
      '--start',
      start.toISOString(),
      '--end',
      end.toISOString(),
      '--max-per-user',
      '1',
      '--exclude-brand-posts',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const doubled = await cli(
      'campaign',
      'create',
      '--brand',
      brand.brandId,
      '--hashtag',
      '#PtsDouble',
      '--multiplier',
      '2',
      '--start',
      new Date(platform.clock.now().getTime() - HOUR).toISOString(),
      '--end',
      new Date(platform.clock.now().getTime() + 10 * HOUR).toISOString(),
      '--json',
    );
    expect(doubled.code, doubled.stderr).toBe(0);

    const early = post(bob, 'too soon #PtsDrop');
    platform.clock.set(start);
    const atStart = post(carol, 'first! #ptsdrop');
    const daveFirst = post(dave, 'in #PtsDrop');
    const daveSecond = post(dave, 'me again #PtsDrop');
    const byBrand = post(BRAND_X, 'join #PtsDrop');
    const double = post(eve, 'twice the fun #PtsDouble');
    platform.clock.set(new Date(end.getTime() - 1));
    const atEnd = post(bob, 'just in time #PtsDrop');
    // The one window rule of drops and perks: at the end moment exactly the campaign has ended.
    platform.clock.set(end);
    const atEndExactly = post(carol, 'on the stroke #PtsDrop');
    platform.clock.set(new Date(end.getTime() + 1000));
    const late = post(alice, 'too late #PtsDrop');
    const poll = await trigger();
    expect(poll.status).toBe('ok');

    const hashtag = async (p: FakeXPost) =>
      (await eventsFor(p.id)).filter((e) => e.event_type === 'post_hashtag').map((e) => Number(e.reward_amount));
    expect(await hashtag(early)).toEqual([]);
    expect(await hashtag(atStart)).toEqual([40]);
    expect(await hashtag(daveFirst)).toEqual([40]);
    expect(await hashtag(daveSecond)).toEqual([]);
    expect(await hashtag(byBrand)).toEqual([]);
    expect(await hashtag(atEnd)).toEqual([40]);
    expect(await hashtag(atEndExactly)).toEqual([]);
    expect(await hashtag(late)).toEqual([]);
    // A multiplier campaign pays the rule's base (50) times 2.
    expect(await hashtag(double)).toEqual([100]);
    const search = x.requests.filter((r) => r.path === '/2/tweets/search/recent').at(-1)!;
    expect(search.query.query).toContain('#PtsDrop');
    expect(search.query.query).toContain('#PtsDouble');
  });

  it("a campaign's per-user limit is core-api's: a wiped state dir does not pay a second campaign post", async () => {
    const created = await cli(
      'campaign',
      'create',
      '--brand',
      brand.brandId,
      '--hashtag',
      '#PtsOnce',
      '--reward',
      '40',
      '--start',
      new Date(platform.clock.now().getTime() - HOUR).toISOString(),
      '--end',
      new Date(platform.clock.now().getTime() + 10 * HOUR).toISOString(),
      '--max-per-user',
      '1',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const campaignId = JSON.parse(created.stdout).id as string;
    const paidToFrank = async () =>
      (
        await platform.deps.db
          .selectFrom('events')
          .select(['metadata'])
          .where('brand_id', '=', brand.brandId)
          .where('event_type', '=', 'post_hashtag')
          .where('user_email', '=', `x_${frank.id}@pts.local`)
          .where('status', '=', 'accepted')
          .execute()
      ).filter((r) => (r.metadata as Record<string, unknown>).campaign_id === campaignId).length;

    const first = post(frank, 'in #PtsOnce');
    expect((await trigger()).status).toBe('ok');
    expect(await paidToFrank()).toBe(1);
    expect((await eventsFor(first.id)).map((e) => e.event_type)).toContain('post_hashtag');

    // The bot loses everything it knew (a crash, a new container without its volume).
    await bot.stop();
    rmSync(dataDir, { recursive: true, force: true });
    platform.clock.advance(60_000);
    bot = await startBot();
    const second = post(frank, 'again #PtsOnce');
    const poll = await trigger();
    expect(poll.status).toBe('ok');
    expect(await paidToFrank()).toBe(1);
    const refused = (await eventsFor(second.id, 'rejected')).filter((e) => e.event_type === 'post_hashtag');
    expect(refused.map((e) => e.reason)).toEqual(['MAX_CLAIMS_REACHED']);
  });

  it('never pays a repost in the mentions timeline as a mention (basic tier: a repost earns nothing)', async () => {
    platform.clock.advance(2 * HOUR);
    const memberMention = post(alice, 'shout out @PtsBrand');
    await trigger();
    const ofBrand = post(gina, `RT @PtsBrand: ${brandPost.text}`, {
      referencedTweets: [{ type: 'retweeted', id: brandPost.id }],
    });
    const ofMember = post(gina, `RT @alice: ${memberMention.text}`, {
      referencedTweets: [{ type: 'retweeted', id: memberMention.id }],
    });
    const poll = await trigger();
    expect(poll.status).toBe('ok');
    expect(poll.fetched).toBe(2);
    expect(poll.rewarded).toBe(0);
    for (const repost of [ofBrand, ofMember]) {
      expect(await eventsFor(repost.id)).toEqual([]);
      expect(await eventsFor(repost.id, 'rejected')).toEqual([]);
    }
    const ginaEvents = await platform.deps.db
      .selectFrom('events')
      .select('event_type')
      .where('user_email', '=', `x_${gina.id}@pts.local`)
      .execute();
    expect(ginaEvents).toEqual([]);
    expect(await trigger()).toMatchObject({ status: 'ok', fetched: 0, rewarded: 0 });
  });

  it('keeps its marks across a restart, and pays nothing twice after its state dir is deleted', async () => {
    await bot.stop();
    bot = await startBot();
    const mark = mentionsRequests().at(-1)!.query.since_id;
    await trigger();
    // the saved mark was used: not a first run
    expect(mentionsRequests().at(-1)!.query.since_id).toBe(mark);

    await bot.stop();
    rmSync(dataDir, { recursive: true, force: true });
    expect(existsSync(dataDir)).toBe(false);
    const before = await acceptedCount();
    // A later time: the same signed body at the same second would be answered by core-api's replay store.
    platform.clock.advance(60_000);
    bot = await startBot();
    const poll = await trigger();
    expect(poll.status).toBe('ok');
    expect(mentionsRequests().at(-1)!.query.since_id).toBeUndefined();
    expect(poll.fetched).toBeGreaterThan(0);
    expect(poll.rewarded).toBe(0);
    expect(poll.duplicates).toBeGreaterThan(0);
    expect(await acceptedCount()).toBe(before);
    expect(existsSync(join(dataDir, `x-bot-${brand.brandId}.json`))).toBe(true);
  });

  it('leaves posts for the next poll when core-api refuses, then rewards them once', async () => {
    platform.clock.advance(2 * HOUR); // past the mention cooldowns
    const a = post(alice, 'back @PtsBrand');
    const b = post(bob, 'me too @PtsBrand');
    coreRefuses = true;
    const failed = await trigger();
    coreRefuses = false;
    expect(failed.status).toBe('failed');
    expect(failed.reason).toContain('core-api');
    expect(failed.retryLater).toBe(2);
    expect((await health()).last_error.message).toContain('retried next poll');
    expect(await eventsFor(a.id)).toEqual([]);

    const retried = await trigger();
    expect(retried.status).toBe('ok');
    expect(mentionsRequests().at(-1)!.query.since_id).toBe(String(BigInt(a.id) - 1n));
    expect((await eventsFor(a.id)).map((e) => e.event_type)).toContain('post_mention');
    expect((await eventsFor(b.id)).map((e) => e.event_type)).toContain('post_mention');
    await trigger();
    expect((await eventsFor(a.id)).filter((e) => e.event_type === 'post_mention')).toHaveLength(1);
  });

  it('stops at an X 429, waits until the reset the headers give (health shows it), then resumes', async () => {
    const resetAt = Math.floor(platform.clock.now().getTime() / 1000) + 600;
    x.setRateLimit('mentions', 0, resetAt);
    const limited = await trigger();
    expect(limited.status).toBe('rate_limited');
    const body = await health();
    expect(body.rate_limited_until).toBe(new Date(resetAt * 1000).toISOString());
    expect(body.last_error.message).toContain('X rate limit');
    const requests = x.requests.length;
    expect((await trigger()).status).toBe('rate_limited');
    expect(x.requests).toHaveLength(requests);

    x.setRateLimit('mentions', 450, Math.floor(Date.now() / 1000) + 900);
    platform.clock.set(new Date(resetAt * 1000 + 1000));
    const resumed = await trigger();
    expect(resumed.status).toBe('ok');
    expect((await health()).rate_limited_until).toBeNull();
  });

  it('POST /reset makes the next poll a first run', async () => {
    const res = await fetch(`${bot.url}/reset`, { method: 'POST', headers: admin });
    expect(res.status).toBe(200);
    await trigger();
    expect(mentionsRequests().at(-1)!.query).toMatchObject({ max_results: '5' });
    expect(mentionsRequests().at(-1)!.query.since_id).toBeUndefined();
  });

  it("reads likes and reposts of the brand's newest post only when X_API_TIER allows", async () => {
    expect(
      x.requests.some(
        (r) => r.path.includes('liking_users') || (r.path.includes('/tweets') && r.path.startsWith('/2/users/')),
      ),
    ).toBe(false);
    await platform.setRule(brand.brandId, { eventType: 'post_like', rewardAmount: 2, cooldownHours: 0, maxClaims: -1 });
    await platform.setRule(brand.brandId, {
      eventType: 'post_repost',
      rewardAmount: 5,
      cooldownHours: 0,
      maxClaims: -1,
    });
    const latest = post(BRAND_X, 'Our newest drop');
    x.addLike(latest.id, alice.id);
    x.addLike(latest.id, bob.id);
    x.addLike(latest.id, BRAND_X.id);
    x.addRepost(latest.id, carol.id);

    // basic: not read
    const basic = await trigger();
    expect(basic.requestsUsed).toBe(2);
    expect(await eventsFor(latest.id)).toEqual([]);

    await bot.stop();
    platform.clock.advance(60_000);
    bot = await startBot('pro');
    const pro = await trigger();
    expect(pro).toMatchObject({ status: 'ok', requestsUsed: 5, rewarded: 3 });
    const events = await eventsFor(latest.id);
    expect(events.map((e) => `${e.event_type}:${e.user_email}`).sort()).toEqual([
      `post_like:x_${alice.id}@pts.local`,
      `post_like:x_${bob.id}@pts.local`,
      `post_repost:x_${carol.id}@pts.local`,
    ]);
    expect(events.find((e) => e.event_type === 'post_like')!.metadata).toMatchObject({ streak_multiplier: 1 });
    const again = await trigger();
    expect(again).toMatchObject({ status: 'ok', rewarded: 0 });
  });

  it("pays a repost of the brand's post seen in mentions as post_repost at a tier that reads reposts, once", async () => {
    const latest = post(BRAND_X, 'Another drop');
    const repost = post(gina, `RT @PtsBrand: ${latest.text}`, {
      referencedTweets: [{ type: 'retweeted', id: latest.id }],
    });
    x.addRepost(latest.id, gina.id);
    const ofMember = post(gina, 'RT @alice: shout out @PtsBrand', {
      referencedTweets: [{ type: 'retweeted', id: latest.id }],
    });
    const poll = await trigger();
    expect(poll.status).toBe('ok');
    const paid = await platform.deps.db
      .selectFrom('events')
      .select(['event_type', 'metadata'])
      .where('user_email', '=', `x_${gina.id}@pts.local`)
      .where('status', '=', 'accepted')
      .execute();
    expect(paid.map((e) => e.event_type)).toEqual(['post_repost']);
    expect(await eventsFor(repost.id, 'rejected')).toEqual([]);
    expect(await eventsFor(ofMember.id)).toEqual([]);
    expect((await trigger()).rewarded).toBe(0);
  });

  it('polls on its cron schedule, and concurrent triggers share one poll', async () => {
    await bot.stop();
    bot = await startBot('basic', '* * * * * *'); // every second
    const before = mentionsRequests().length;
    await vi.waitFor(() => expect(mentionsRequests().length).toBeGreaterThan(before), { timeout: 5000, interval: 100 });
    await vi.waitFor(async () => expect((await health()).last_poll).not.toBeNull(), { timeout: 5000, interval: 100 });
    const body = await health();
    expect(new Date(body.next_poll).toISOString()).toBe(body.next_poll);

    await bot.stop();
    bot = await startBot();
    const count = mentionsRequests().length;
    const [a, b] = await Promise.all([trigger(), trigger()]);
    expect(a).toEqual(b);
    expect(mentionsRequests()).toHaveLength(count + 1);
  });

  it("caches the handle's user id for 24 hours", async () => {
    const lookups = () => x.requests.filter((r) => r.path.startsWith('/2/users/by/username/')).length;
    const before = lookups();
    await trigger();
    expect(lookups()).toBe(before);
    platform.clock.advance(24 * HOUR + 1000);
    await trigger();
    expect(lookups()).toBe(before + 1);
    await trigger();
    expect(lookups()).toBe(before + 1);
  });
});
