import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';

/**
 * A local fake Discord speaking the real wire protocol: REST under `/api/v10` and a JSON gateway over ws.
 * The real discord.js client connects to it with `rest: { api: fake.apiUrl }`; tests feed gateway events
 * (`INTERACTION_CREATE`, `MESSAGE_CREATE`, `GUILD_MEMBER_ADD`) and read the REST calls the bot made.
 */

/** Gateway intent bits (https://discord.com/developers/docs/events/gateway#gateway-intents). */
export const INTENT = {
  Guilds: 1 << 0,
  GuildMembers: 1 << 1,
  GuildMessages: 1 << 9,
  DirectMessages: 1 << 12,
  MessageContent: 1 << 15,
} as const;

/** Permission bits used by the tests. */
export const PERMISSION = {
  Administrator: 1n << 3n,
  ManageGuild: 1n << 5n,
  SendMessages: 1n << 11n,
  ViewChannel: 1n << 10n,
} as const;

export interface FakeUser {
  id: string;
  username: string;
  global_name?: string | null;
  bot?: boolean;
  /** The member's role ids in the guild (sent in member payloads). */
  roles?: string[];
}

export interface FakeGuild {
  id: string;
  name: string;
  ownerId: string;
  /** Text channels: the first is the system channel unless `systemChannelId` says otherwise. */
  channels: { id: string; name: string }[];
  systemChannelId?: string | null;
  /** Roles besides `@everyone` (members hold them by id). */
  roles?: { id: string; name: string }[];
}

/** One REST request the bot made. */
export interface RecordedCall {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  authorization: string | undefined;
}

export interface FakeDiscordOptions {
  token: string;
  applicationId: string;
  botUser?: FakeUser;
  guilds?: FakeGuild[];
}

export interface FakeDiscord {
  /** `http://127.0.0.1:PORT/api`: pass as discord.js `rest.api`. */
  apiUrl: string;
  applicationId: string;
  botUser: FakeUser;
  calls: RecordedCall[];
  /** The IDENTIFY payloads received (intents, token, properties). */
  identifies: { token: string; intents: number; [key: string]: unknown }[];
  /** Sends a dispatch event to every identified session whose intents allow it; resolves to the number reached. */
  dispatch(event: string, data: Record<string, unknown>): number;
  /** Resolves with the first recorded call (past or future) that matches. */
  waitForCall(match: (call: RecordedCall) => boolean, timeoutMs?: number): Promise<RecordedCall>;
  /** Number of identified gateway sessions. */
  sessionCount(): number;
  close(): Promise<void>;
}

interface Session {
  socket: WebSocket;
  intents: number;
  sequence: number;
}

const snowflakeBase = BigInt(Date.now() - 1_420_070_400_000) << 22n;
let snowflakeCounter = 0n;
/** A fresh snowflake (Discord ids carry their creation time). */
export function snowflake(): string {
  snowflakeCounter += 1n;
  return (snowflakeBase + snowflakeCounter).toString();
}

/** Starts the fake on a free local port. */
export async function startFakeDiscord(options: FakeDiscordOptions): Promise<FakeDiscord> {
  const botUser: FakeUser = options.botUser ?? { id: snowflake(), username: 'pts-bot', bot: true };
  const guilds = options.guilds ?? [];
  const calls: RecordedCall[] = [];
  const identifies: FakeDiscord['identifies'] = [];
  const sessions = new Set<Session>();
  const waiters = new Set<{ match: (call: RecordedCall) => boolean; resolve: (call: RecordedCall) => void }>();
  let gatewayUrl = '';

  const record = (call: RecordedCall) => {
    calls.push(call);
    for (const waiter of waiters) {
      if (waiter.match(call)) {
        waiters.delete(waiter);
        waiter.resolve(call);
      }
    }
  };

  const messageObject = (channelId: string, body: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    id: snowflake(),
    channel_id: channelId,
    author: { ...botUser, discriminator: '0', avatar: null },
    content: typeof body.content === 'string' ? body.content : '',
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: Array.isArray(body.embeds) ? body.embeds : [],
    components: Array.isArray(body.components) ? body.components : [],
    pinned: false,
    type: 0,
    flags: typeof body.flags === 'number' ? body.flags : 0,
    ...extra,
  });

  const routes: {
    method: string;
    pattern: RegExp;
    handle(match: RegExpMatchArray, body: unknown, query: Record<string, string>): { status: number; json?: unknown };
  }[] = [
    {
      method: 'GET',
      pattern: /^\/api\/v10\/gateway\/bot$/,
      handle: () => ({
        status: 200,
        json: {
          url: gatewayUrl,
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
        },
      }),
    },
    {
      method: 'GET',
      pattern: /^\/api\/v10\/users\/@me$/,
      handle: () => ({ status: 200, json: { ...botUser, discriminator: '0', avatar: null } }),
    },
    {
      method: 'POST',
      pattern: /^\/api\/v10\/interactions\/(\d+)\/([^/]+)\/callback$/,
      handle: (_match, _body, query) =>
        query.with_response === 'true'
          ? { status: 200, json: { interaction: { id: _match[1], type: 2 }, resource: null } }
          : { status: 204 },
    },
    {
      method: 'PATCH',
      pattern: /^\/api\/v10\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/,
      handle: (_match, body) => ({ status: 200, json: messageObject(snowflake(), asRecord(body)) }),
    },
    {
      method: 'DELETE',
      pattern: /^\/api\/v10\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/,
      handle: () => ({ status: 204 }),
    },
    {
      method: 'POST',
      pattern: /^\/api\/v10\/webhooks\/(\d+)\/([^/]+)$/,
      handle: (_match, body) => ({ status: 200, json: messageObject(snowflake(), asRecord(body)) }),
    },
    {
      method: 'POST',
      pattern: /^\/api\/v10\/channels\/(\d+)\/messages$/,
      handle: (match, body) => ({ status: 200, json: messageObject(match[1] as string, asRecord(body)) }),
    },
    {
      method: 'POST',
      pattern: /^\/api\/v10\/users\/@me\/channels$/,
      handle: (_match, body) => {
        const recipient = asRecord(body).recipient_id;
        return {
          status: 200,
          json: {
            id: snowflake(),
            type: 1,
            last_message_id: null,
            recipients: [{ id: recipient, username: `user-${recipient}`, discriminator: '0', avatar: null }],
          },
        };
      },
    },
    {
      method: 'PUT',
      pattern: /^\/api\/v10\/applications\/(\d+)(?:\/guilds\/(\d+))?\/commands$/,
      handle: (match, body) => {
        if (match[1] !== options.applicationId) {
          return { status: 403, json: { message: 'Missing Access', code: 50001 } };
        }
        const list = Array.isArray(body) ? body : [];
        return {
          status: 200,
          json: list.map((command) => ({
            ...asRecord(command),
            id: snowflake(),
            application_id: options.applicationId,
            version: snowflake(),
            ...(match[2] ? { guild_id: match[2] } : {}),
          })),
        };
      },
    },
  ];

  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      if (raw) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
      }
      // discord.js percent-encodes `@original`; Discord routes on the decoded path.
      const pathname = decodeURIComponent(url.pathname);
      const call: RecordedCall = {
        method: request.method ?? 'GET',
        path: pathname,
        query: Object.fromEntries(url.searchParams),
        body,
        authorization: request.headers.authorization,
      };
      const send = (status: number, json?: unknown) => {
        if (json === undefined) {
          response.writeHead(status);
          response.end();
        } else {
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(JSON.stringify(json));
        }
      };
      // Interaction callbacks and webhook calls are authenticated by the interaction token in the path.
      const tokenInPath = /^\/api\/v10\/(interactions|webhooks)\//.test(pathname);
      if (!tokenInPath && request.headers.authorization !== `Bot ${options.token}`) {
        record(call);
        send(401, { message: '401: Unauthorized', code: 0 });
        return;
      }
      for (const route of routes) {
        if (route.method !== call.method) continue;
        const match = pathname.match(route.pattern);
        if (!match) continue;
        const result = route.handle(match, body, call.query);
        record(call);
        send(result.status, result.json);
        return;
      }
      record(call);
      send(404, { message: '404: Not Found', code: 0 });
    });
  });

  const wss = new WebSocketServer({ server, path: '/gateway' });
  wss.on('connection', (socket) => {
    const session: Session = { socket, intents: 0, sequence: 0 };
    const sendDispatch = (event: string, data: unknown) => {
      session.sequence += 1;
      socket.send(JSON.stringify({ op: 0, t: event, s: session.sequence, d: data }));
    };
    socket.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41_250 }, s: null, t: null }));
    socket.on('message', (data) => {
      const payload = JSON.parse(String(data)) as { op: number; d: Record<string, unknown> | number | null };
      if (payload.op === 1) {
        socket.send(JSON.stringify({ op: 11, d: null, s: null, t: null }));
        return;
      }
      if (payload.op === 2) {
        const identify = payload.d as { token: string; intents: number };
        identifies.push(identify);
        if (identify.token !== options.token) {
          socket.close(4004, 'Authentication failed.');
          return;
        }
        session.intents = identify.intents;
        sessions.add(session);
        sendDispatch('READY', {
          v: 10,
          user: { ...botUser, discriminator: '0', avatar: null, verified: true, flags: 0 },
          guilds: guilds.map((guild) => ({ id: guild.id, unavailable: true })),
          session_id: randomBytes(16).toString('hex'),
          resume_gateway_url: gatewayUrl,
          shard: [0, 1],
          application: { id: options.applicationId, flags: 0 },
        });
        for (const guild of guilds) sendDispatch('GUILD_CREATE', guildCreatePayload(guild, botUser));
        return;
      }
    });
    socket.on('close', () => sessions.delete(session));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  gatewayUrl = `ws://127.0.0.1:${port}/gateway`;

  return {
    apiUrl: `http://127.0.0.1:${port}/api`,
    applicationId: options.applicationId,
    botUser,
    calls,
    identifies,
    dispatch(event, data) {
      let reached = 0;
      for (const session of sessions) {
        const payload = filterByIntents(event, data, session.intents);
        if (!payload || session.socket.readyState !== WebSocket.OPEN) continue;
        session.sequence += 1;
        session.socket.send(JSON.stringify({ op: 0, t: event, s: session.sequence, d: payload }));
        reached += 1;
      }
      return reached;
    },
    waitForCall(match, timeoutMs = 5_000) {
      const existing = calls.find(match);
      if (existing) return Promise.resolve(existing);
      return new Promise((resolve, reject) => {
        const waiter = {
          match,
          resolve: (call: RecordedCall) => {
            clearTimeout(timer);
            resolve(call);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(
            new Error(`No matching Discord REST call within ${timeoutMs} ms; calls: ${JSON.stringify(calls, null, 1)}`),
          );
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    sessionCount: () => sessions.size,
    async close() {
      for (const session of sessions) session.socket.close(1000);
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Applies Discord's intent rules: events a session did not ask for are not sent; content needs MessageContent. */
function filterByIntents(
  event: string,
  data: Record<string, unknown>,
  intents: number,
): Record<string, unknown> | undefined {
  if (event === 'GUILD_MEMBER_ADD' || event === 'GUILD_MEMBER_UPDATE') {
    return intents & INTENT.GuildMembers ? data : undefined;
  }
  if (event === 'MESSAGE_CREATE') {
    const inGuild = typeof data.guild_id === 'string';
    if (inGuild && !(intents & INTENT.GuildMessages)) return undefined;
    if (!inGuild && !(intents & INTENT.DirectMessages)) return undefined;
    if (!(intents & INTENT.MessageContent) && inGuild) return { ...data, content: '', embeds: [], components: [] };
    return data;
  }
  return data;
}

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function userPayload(user: FakeUser) {
  return {
    id: user.id,
    username: user.username,
    global_name: user.global_name ?? null,
    discriminator: '0',
    avatar: null,
    bot: user.bot ?? false,
    public_flags: 0,
  };
}

function memberPayload(user: FakeUser, permissions: bigint) {
  return {
    user: userPayload(user),
    nick: null,
    avatar: null,
    roles: user.roles ?? [],
    joined_at: new Date().toISOString(),
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
    permissions: permissions.toString(),
  };
}

function guildCreatePayload(guild: FakeGuild, botUser: FakeUser) {
  return {
    id: guild.id,
    name: guild.name,
    icon: null,
    splash: null,
    discovery_splash: null,
    owner_id: guild.ownerId,
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    roles: [
      {
        id: guild.id,
        name: '@everyone',
        color: 0,
        hoist: false,
        icon: null,
        unicode_emoji: null,
        position: 0,
        permissions: (PERMISSION.SendMessages | PERMISSION.ViewChannel).toString(),
        managed: false,
        mentionable: false,
        flags: 0,
      },
      ...(guild.roles ?? []).map((role, index) => ({
        id: role.id,
        name: role.name,
        color: 0,
        hoist: false,
        icon: null,
        unicode_emoji: null,
        position: index + 1,
        permissions: '0',
        managed: false,
        mentionable: false,
        flags: 0,
      })),
    ],
    emojis: [],
    stickers: [],
    features: [],
    mfa_level: 0,
    application_id: null,
    system_channel_id: guild.systemChannelId === undefined ? (guild.channels[0]?.id ?? null) : guild.systemChannelId,
    system_channel_flags: 0,
    rules_channel_id: null,
    vanity_url_code: null,
    description: null,
    banner: null,
    premium_tier: 0,
    premium_subscription_count: 0,
    preferred_locale: 'en-US',
    public_updates_channel_id: null,
    nsfw_level: 0,
    premium_progress_bar_enabled: false,
    joined_at: new Date().toISOString(),
    large: false,
    unavailable: false,
    member_count: 2,
    voice_states: [],
    members: [memberPayload(botUser, 0n)],
    channels: guild.channels.map((channel, position) => ({
      id: channel.id,
      type: 0,
      guild_id: guild.id,
      name: channel.name,
      position,
      permission_overwrites: [],
      nsfw: false,
      topic: null,
      last_message_id: null,
      rate_limit_per_user: 0,
      parent_id: null,
    })),
    threads: [],
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

/** Where an interaction or message happens: a guild channel (with the member's permissions) or a DM. */
export type FakePlace =
  | { guild: FakeGuild; channelId: string; permissions?: bigint }
  | { dmChannelId: string; permissions?: undefined };

function placeFields(user: FakeUser, place: FakePlace) {
  if ('guild' in place) {
    const channel = place.guild.channels.find((c) => c.id === place.channelId);
    return {
      guild_id: place.guild.id,
      guild: { id: place.guild.id, locale: 'en-US', features: [] },
      guild_locale: 'en-US',
      channel_id: place.channelId,
      channel: {
        id: place.channelId,
        type: 0,
        guild_id: place.guild.id,
        name: channel?.name ?? 'general',
        position: 0,
        permission_overwrites: [],
        nsfw: false,
        parent_id: null,
        flags: 0,
        rate_limit_per_user: 0,
        last_message_id: null,
        topic: null,
        permissions: (place.permissions ?? 0n).toString(),
      },
      member: memberPayload(user, place.permissions ?? 0n),
      context: 0,
    };
  }
  return {
    channel_id: place.dmChannelId,
    channel: { id: place.dmChannelId, type: 1, recipients: [userPayload(user)], last_message_id: null, flags: 0 },
    user: userPayload(user),
    context: 1,
  };
}

interface InteractionCommon {
  id: string;
  token: string;
}

/** An `INTERACTION_CREATE` payload for a slash command. */
export function slashCommandInteraction(
  applicationId: string,
  user: FakeUser,
  place: FakePlace,
  name: string,
  options: { name: string; value: string | number | boolean; type?: number }[] = [],
): Record<string, unknown> & InteractionCommon {
  return {
    id: snowflake(),
    application_id: applicationId,
    type: 2,
    token: `itoken-${randomBytes(12).toString('hex')}`,
    version: 1,
    data: {
      id: snowflake(),
      name,
      type: 1,
      options: options.map((option) => ({ type: option.type ?? 3, name: option.name, value: option.value })),
    },
    app_permissions: (PERMISSION.SendMessages | PERMISSION.ViewChannel).toString(),
    locale: 'en-US',
    entitlements: [],
    authorizing_integration_owners: { 0: 'guild' in place ? place.guild.id : user.id },
    attachment_size_limit: 10_485_760,
    ...placeFields(user, place),
  };
}

/** An `INTERACTION_CREATE` payload for a button click on a message the bot sent. */
export function buttonInteraction(
  applicationId: string,
  botUser: FakeUser,
  user: FakeUser,
  place: FakePlace,
  customId: string,
): Record<string, unknown> & InteractionCommon {
  const fields = placeFields(user, place);
  return {
    id: snowflake(),
    application_id: applicationId,
    type: 3,
    token: `itoken-${randomBytes(12).toString('hex')}`,
    version: 1,
    data: { custom_id: customId, component_type: 2 },
    message: {
      id: snowflake(),
      channel_id: fields.channel_id,
      author: userPayload(botUser),
      content: '',
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: [],
      embeds: [],
      components: [{ type: 1, components: [{ type: 2, style: 1, custom_id: customId, label: 'Claim' }] }],
      pinned: false,
      type: 0,
      flags: 0,
    },
    app_permissions: (PERMISSION.SendMessages | PERMISSION.ViewChannel).toString(),
    locale: 'en-US',
    entitlements: [],
    authorizing_integration_owners: { 0: 'guild' in place ? place.guild.id : user.id },
    attachment_size_limit: 10_485_760,
    ...fields,
  };
}

/** A `MESSAGE_CREATE` payload (a user writing in a guild channel or a DM). */
export function messageCreate(user: FakeUser, place: FakePlace, content: string): Record<string, unknown> {
  const base = {
    id: snowflake(),
    author: userPayload(user),
    content,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    components: [],
    pinned: false,
    type: 0,
    flags: 0,
  };
  if ('guild' in place) {
    const { user: _user, permissions: _permissions, ...member } = memberPayload(user, 0n);
    return { ...base, channel_id: place.channelId, guild_id: place.guild.id, member };
  }
  return { ...base, channel_id: place.dmChannelId };
}

/** A `GUILD_MEMBER_UPDATE` payload: the member's roles are now `roles`. */
export function guildMemberUpdate(guild: FakeGuild, user: FakeUser, roles: string[]): Record<string, unknown> {
  const { permissions: _permissions, ...member } = memberPayload({ ...user, roles }, 0n);
  return { ...member, guild_id: guild.id };
}

/** A `GUILD_MEMBER_ADD` payload. */
export function guildMemberAdd(guild: FakeGuild, user: FakeUser): Record<string, unknown> {
  const { permissions: _permissions, ...member } = memberPayload(user, 0n);
  return { ...member, guild_id: guild.id };
}
