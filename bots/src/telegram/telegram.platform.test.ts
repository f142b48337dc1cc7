import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreatedBrand } from '@pts/shared';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../core-api/test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../core-api/test/platform.ts';
import { type FakeBotApi, startFakeBotApi } from '../../test/fakes/telegram-bot-api.ts';
import { memoryGroupStore } from '../../test/helpers.ts';
import { loadBotConfig } from '../config.ts';
import { type RunningTelegramBot, startTelegramBot } from './app.ts';

// The real grammY bot (long polling, auto-retry) against a local fake Bot API, over the real core-api
// (PGlite + anvil): setup, daily, a greeting, a member join, a milestone claimed with a button, and an
// admin-only command refused to a member.

const GROUP = -1001234567890;
const ADMIN = { id: 1001, is_bot: false, first_name: 'Ada', username: 'ada' };
const MEMBER = { id: 2002, is_bot: false, first_name: 'Bob', username: 'bob' };
const chat = { id: GROUP, type: 'supergroup', title: 'Fans' };

let platform: TestPlatform;
let brand: CreatedBrand;
let api: FakeBotApi;
let bot: RunningTelegramBot;
let dataDir: string;
let messageId = 1;

function sendText(from: typeof ADMIN, text: string): { since: number; messageId: number } {
  const since = api.calls.length;
  const id = messageId++;
  const entities = text.startsWith('/')
    ? [{ type: 'bot_command', offset: 0, length: text.split(/\s/)[0]!.length }]
    : undefined;
  api.pushUpdate({
    message: {
      message_id: id,
      date: Math.floor(Date.now() / 1000),
      chat,
      from,
      text,
      ...(entities ? { entities } : {}),
    },
  });
  return { since, messageId: id };
}

/** A message in the user's private chat with the bot; resolves with the bot's answer there. */
async function privateReply(from: typeof ADMIN, text: string): Promise<string> {
  const since = api.calls.length;
  api.pushUpdate({
    message: {
      message_id: messageId++,
      date: Math.floor(Date.now() / 1000),
      chat: { id: from.id, type: 'private', first_name: from.first_name },
      from,
      text,
      entities: [{ type: 'bot_command', offset: 0, length: text.split(/\s/)[0]!.length }],
    },
  });
  const call = await api.waitForCall('sendMessage', (p) => Number(p.chat_id) === from.id, since);
  return String(call.params.text);
}

async function replyTo(from: typeof ADMIN, text: string): Promise<string> {
  const { since } = sendText(from, text);
  const call = await api.waitForCall('sendMessage', (p) => Number(p.chat_id) === GROUP, since);
  return String(call.params.text);
}

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({ name: 'Fans Brand' });
  api = await startFakeBotApi();
  api.setMember(GROUP, ADMIN.id, 'creator');
  api.setMember(GROUP, MEMBER.id, 'member');
  dataDir = mkdtempSync(join(tmpdir(), 'pts-bot-'));
  const config = loadBotConfig({
    TELEGRAM_BOT_TOKEN: api.token,
    TELEGRAM_API_ROOT: api.apiRoot,
    PTS_CORE_API_URL: platform.url,
    BOT_DATA_DIR: dataDir,
    HEALTH_PORT: '0',
    LOG_LEVEL: 'silent',
  });
  bot = await startTelegramBot(config, {
    clock: platform.clock,
    groups: memoryGroupStore(),
    logger: pino({ level: process.env.PTS_TEST_LOG_LEVEL ?? 'silent' }),
  });
  await api.waitForCall('getUpdates');
}, 120_000);

afterAll(async () => {
  await bot?.stop();
  await api?.close();
  await platform?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('telegram bot end to end', () => {
  it('serves /health once polling runs', async () => {
    const res = await fetch(`${bot.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', platform: 'telegram' });
  });

  it('refuses /setup to a member (getChatMember says member) and deletes the message holding the key', async () => {
    const { since, messageId: id } = sendText(MEMBER, `/setup ${brand.brandId} ${brand.securityKey}`);
    const reply = await api.waitForCall('sendMessage', () => true, since);
    expect(reply.params.text).toBe('Only group admins can use /setup.');
    expect(api.calls.slice(since).find((c) => c.method === 'getChatMember')?.params).toMatchObject({
      user_id: MEMBER.id,
    });
    expect(api.calls.slice(since).find((c) => c.method === 'deleteMessage')?.params).toMatchObject({ message_id: id });
    expect(await replyTo(MEMBER, '/daily')).toMatch(
      /a group admin must run \/setup &lt;brand_id&gt; &lt;security_key&gt;/,
    );
  });

  it('sets the group up for an admin, without echoing the key', async () => {
    const { since } = sendText(ADMIN, `/setup@pts_test_bot ${brand.brandId} ${brand.securityKey}`);
    const reply = await api.waitForCall('sendMessage', () => true, since);
    expect(reply.params.text).toMatch(/now linked to brand/);
    expect(reply.params.text).toMatch(/Daily reward<\/b>: 10 pts/);
    expect(JSON.stringify(api.calls.slice(since))).not.toContain(brand.securityKey);
    expect(api.calls.slice(since).some((c) => c.method === 'deleteMessage')).toBe(true);
    const group = await platform.deps.db
      .selectFrom('chat_groups')
      .selectAll()
      .where('chat_group_id', '=', `telegram:${GROUP}`)
      .executeTakeFirstOrThrow();
    expect(group.brand_id).toBe(brand.brandId.toLowerCase());
  });

  it('reports member status as chat roles with /perks, so a role-gated perk can be judged', async () => {
    await replyTo(MEMBER, '/perks');
    await replyTo(ADMIN, '/rewards');
    const rows = await platform.deps.db
      .selectFrom('chat_member_roles')
      .select(['platform_user_id', 'roles', 'guild_id'])
      .where('platform', '=', 'telegram')
      .where('platform_user_id', 'in', [String(MEMBER.id), String(ADMIN.id)])
      .orderBy('platform_user_id')
      .execute();
    expect(rows).toEqual([
      { platform_user_id: String(ADMIN.id), roles: ['creator', 'admin'], guild_id: String(GROUP) },
      { platform_user_id: String(MEMBER.id), roles: ['member'], guild_id: String(GROUP) },
    ]);
  });

  it('pays /daily and answers a second one with the reset time', async () => {
    expect(await replyTo(MEMBER, '/daily')).toMatch(/Checked in: \+10 pts/);
    expect(await replyTo(MEMBER, '/checkin')).toMatch(/already checked in today/);
  });

  it('pays a good-morning greeting (silently by default) and rewards the event with the chat as channel_id', async () => {
    const { since } = sendText(MEMBER, 'well GOOD MORNING everyone');
    await expect
      .poll(
        async () => {
          const rows = await platform.deps.db
            .selectFrom('events')
            .select(['event_type', 'status'])
            .where('user_email', '=', `telegram_${MEMBER.id}@pts.local`)
            .where('event_type', '=', 'good_morning')
            .execute();
          return rows.map((r) => r.status);
        },
        { timeout: 10_000 },
      )
      .toEqual(['accepted']);
    expect(api.calls.slice(since).some((c) => c.method === 'sendMessage')).toBe(false);
  });

  it('pays all of ten members who say good morning at once', async () => {
    const members = Array.from({ length: 10 }, (_, i) => ({
      id: 5000 + i,
      is_bot: false,
      first_name: `M${i}`,
      username: `m${i}`,
    }));
    for (const member of members) sendText(member, 'gm all');
    await expect
      .poll(
        async () => {
          const rows = await platform.deps.db
            .selectFrom('events')
            .select(['status'])
            .where(
              'user_email',
              'in',
              members.map((m) => `telegram_${m.id}@pts.local`),
            )
            .where('event_type', '=', 'good_morning')
            .execute();
          return rows.filter((r) => r.status === 'accepted').length;
        },
        { timeout: 15_000 },
      )
      .toBe(10);
  });

  it('shows members by their Telegram names on the leaderboard (names travel with events and check-ins)', async () => {
    await waitForMintsSettled(platform);
    const board = await replyTo(MEMBER, '/lb tokens all');
    expect(board).toMatch(/\d+\. Bob: \d+/);
    expect(board).toMatch(/\d+\. M3: \d+/);
    expect(board).not.toMatch(/telegram user/);
    const streaks = await replyTo(MEMBER, '/lb streaks');
    expect(streaks).toMatch(/1\. Bob: 1/);
  });

  it('sends a /link code only in a private chat, never in the group', async () => {
    const since = api.calls.length;
    const notice = await replyTo(MEMBER, '/link');
    expect(notice).toMatch(/private message/);
    const dm = api.calls.slice(since).find((c) => c.method === 'sendMessage' && Number(c.params.chat_id) === MEMBER.id);
    expect(String(dm?.params.text)).toMatch(/Your link code is [A-Z0-9]{8}/);
    const inGroup = api.calls
      .slice(since)
      .filter((c) => c.method === 'sendMessage' && Number(c.params.chat_id) === GROUP)
      .map((c) => String(c.params.text));
    expect(inGroup.join('\n')).not.toMatch(/[A-Z0-9]{8}\b.*valid until|Your link code/);

    // A member who never opened a private chat with the bot is told how, and the code is not shown.
    api.blockPrivate(ADMIN.id);
    const told = await replyTo(ADMIN, '/link');
    expect(told).toMatch(/only send this in a private chat: open @/);
    expect(told).not.toMatch(/Your link code/);
  });

  it('/unlink takes the Telegram account out of an account joined from Discord; the primary is told where to go', async () => {
    const member = { id: 4004, is_bot: false, first_name: 'Di', username: 'di' };
    const telegramKey = `telegram_${member.id}@pts.local`;
    const discordKey = 'discord_4004000@pts.local';
    // Di asks for a code on Telegram (it arrives privately) and confirms it from Discord.
    const since = api.calls.length;
    sendText(member, '/link');
    const dm = await api.waitForCall('sendMessage', (p) => Number(p.chat_id) === member.id, since);
    const code = /Your link code is ([A-Z0-9]{8})/.exec(String(dm.params.text))?.[1];
    expect(code).toBeDefined();
    const confirmed = await platform.signedPost(
      '/services/link/confirm',
      { brandId: brand.brandId, userIdentifier: discordKey, code },
      brand.securityKey,
    );
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect(confirmed.body.accountKey).toBe(telegramKey);

    // The Telegram identity is the account (it issued the code): it holds the wallet and stays.
    expect(await replyTo(member, '/unlink')).toMatch(
      /holds your joined wallet.*Send \/unlink from your discord account/s,
    );
    const accountOf = async (key: string) =>
      (
        await platform.deps.db
          .selectFrom('account_links')
          .select('account_key')
          .where('identity_key', '=', key)
          .executeTakeFirst()
      )?.account_key ?? key;
    expect(await accountOf(discordKey)).toBe(telegramKey);

    // Unlinking from the other side works; then Telegram is told there is nothing left to unlink.
    const unlinked = await platform.signedPost(
      '/services/link/unlink',
      { brandId: brand.brandId, userIdentifier: discordKey },
      brand.securityKey,
    );
    expect(unlinked.status, JSON.stringify(unlinked.body)).toBe(200);
    expect(await accountOf(discordKey)).toBe(discordKey);
    expect(await replyTo(member, '/unlink')).toMatch(/not linked to any other; there is nothing to unlink/);
  });

  it('/unlink from a linked (non-primary) Telegram account gives it its own wallet again', async () => {
    const member = { id: 4005, is_bot: false, first_name: 'Ed', username: 'ed' };
    const telegramKey = `telegram_${member.id}@pts.local`;
    const discordKey = 'discord_4005000@pts.local';
    const issued = await platform.signedPost(
      '/services/link/code',
      { brandId: brand.brandId, userIdentifier: discordKey },
      brand.securityKey,
    );
    expect(issued.status).toBe(200);
    expect(await privateReply(member, `/link ${issued.body.code}`)).toMatch(/accounts are linked/);
    expect(await replyTo(member, '/unlink')).toMatch(/is unlinked: it starts again.*stay with your discord account/s);
    const link = await platform.deps.db
      .selectFrom('account_links')
      .select('account_key')
      .where('identity_key', '=', telegramKey)
      .executeTakeFirst();
    expect(link).toBeUndefined();
  });

  it('a link code typed in the group is deleted at once and voided; a refused private attempt burns it (issue 24 §6)', async () => {
    const issue = async (identityKey: string) => {
      // A new second: the same signed body at the same second is answered as a replay of the first.
      platform.clock.advance(1000);
      const issued = await platform.signedPost(
        '/services/link/code',
        { brandId: brand.brandId, userIdentifier: identityKey },
        brand.securityKey,
      );
      expect(issued.status).toBe(200);
      return issued.body.code as string;
    };
    // How many identities share the key's account (1: the key alone).
    const accountSize = async (key: string) => {
      const rows = await platform.deps.db
        .selectFrom('account_links')
        .select('identity_key')
        .where((eb) => eb.or([eb('account_key', '=', key), eb('identity_key', '=', key)]))
        .execute();
      return rows.length === 0 ? 1 : rows.length + 1;
    };
    const victim = 'discord_5005000@pts.local';
    const fay = { id: 5006, is_bot: false, first_name: 'Fay', username: 'fay' };
    const gus = { id: 5007, is_bot: false, first_name: 'Gus', username: 'gus' };
    // Fay's Telegram account is already linked to another Discord account.
    const faysCode = await issue('discord_5006000@pts.local');
    expect(await privateReply(fay, `/link ${faysCode}`)).toMatch(/accounts are linked/);

    // The victim's code is posted in the group by Fay: deleted before anything is answered, and voided.
    const code = await issue(victim);
    const { since, messageId: posted } = sendText(fay, `/link ${code}`);
    const answer = await api.waitForCall('sendMessage', (p) => Number(p.chat_id) === GROUP, since);
    const firstCall = api.calls.slice(since).find((c) => c.method === 'deleteMessage' || c.method === 'sendMessage');
    expect(firstCall?.method).toBe('deleteMessage');
    expect(firstCall?.params).toMatchObject({ message_id: posted });
    expect(String(answer.params.text)).toMatch(/Never type a link code in a group.*no longer works/s);
    expect(String(answer.params.text)).not.toContain(code);
    // Gus saw it and sends it to the bot privately: refused, the victim's account stays his own.
    expect(await privateReply(gus, `/link ${code}`)).toMatch(/already used|no longer works|ask for a new one/i);
    expect(await accountSize(victim)).toBe(1);
    expect(await accountSize(`telegram_${gus.id}@pts.local`)).toBe(1);

    // In a private chat, Fay (linked elsewhere) is refused, and the refusal burns the code for Gus too.
    const second = await issue(victim);
    const refused = await privateReply(fay, `/link ${second}`);
    expect(refused).toMatch(/already linked to another/);
    expect(refused).not.toMatch(/@pts\.local|telegram_/);
    expect(await privateReply(gus, `/link ${second}`)).toMatch(/already used|ask for a new one/i);
    expect(await accountSize(victim)).toBe(1);

    // A fresh code confirmed privately by its owner's other account works.
    const third = await issue(victim);
    expect(await privateReply(gus, `/link ${third}`)).toMatch(/accounts are linked/);
  });

  it('pays the welcome bonus when a member joins and greets them', async () => {
    const since = api.calls.length;
    const newcomer = { id: 3003, is_bot: false, first_name: 'Cy' };
    api.pushUpdate({
      message: {
        message_id: messageId++,
        date: Math.floor(Date.now() / 1000),
        chat,
        from: newcomer,
        new_chat_members: [newcomer],
      },
    });
    const reply = await api.waitForCall('sendMessage', () => true, since);
    expect(reply.params.text).toMatch(/Welcome, Cy! You received a welcome bonus of 50 pts/);
  });

  it('claims a 7-day milestone with the inline button', async () => {
    for (let day = 1; day < 7; day++) {
      platform.clock.advance(24 * 3600 * 1000);
      expect(await replyTo(MEMBER, '/daily')).toMatch(/Checked in/);
    }
    const { since } = sendText(MEMBER, '/streak');
    const streak = await api.waitForCall('sendMessage', () => true, since);
    const keyboard = (streak.params.reply_markup as { inline_keyboard: { text: string; callback_data: string }[][] })
      .inline_keyboard;
    expect(keyboard[0]?.[0]).toEqual({ text: 'Claim 7-day bonus (100 pts)', callback_data: 'milestone:7' });
    const clickSince = api.calls.length;
    api.pushUpdate({
      callback_query: {
        id: 'cb1',
        from: MEMBER,
        chat_instance: 'ci',
        data: 'milestone:7',
        message: { message_id: 999, date: 0, chat, text: 'streak' },
      },
    });
    const answer = await api.waitForCall('answerCallbackQuery', () => true, clickSince);
    expect(answer.params).toMatchObject({ callback_query_id: 'cb1' });
    const claimed = await api.waitForCall('sendMessage', () => true, clickSince);
    expect(claimed.params.text).toMatch(/Bob claimed the 7-day streak bonus: \+100 pts/);
    await waitForMintsSettled(platform);
  });

  it('retries a 429 from the Bot API after retry_after (auto-retry)', async () => {
    api.failNext('sendMessage', 1);
    const { since } = sendText(MEMBER, '/help');
    const sends = () => api.calls.slice(since).filter((c) => c.method === 'sendMessage');
    await expect.poll(() => sends().length, { timeout: 10_000 }).toBe(2);
    expect(String(sends()[1]?.params.text)).toMatch(/pts commands/);
  });
});
