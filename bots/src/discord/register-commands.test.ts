import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { RESTPutAPIApplicationCommandsJSONBody } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type FakeDiscord, snowflake, startFakeDiscord } from '../../test/fakes/discord-server.ts';
import type { Command } from '../core/types.ts';
import { loadCommandList } from './core-binding.ts';
import { registerCommands } from './register-commands.ts';
import { buildSlashCommands } from './slash-commands.ts';

const run = promisify(execFile);
const TOKEN = `MTAx.${randomBytes(24).toString('base64url')}`;
const APP_ID = snowflake();
const GUILD_ID = snowflake();
const script = fileURLToPath(new URL('./register-commands.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

type Body = RESTPutAPIApplicationCommandsJSONBody;
const byName = (body: Body, name: string) => body.find((c) => c.name === name) as Record<string, unknown> | undefined;

describe('slash command registration', () => {
  let fake: FakeDiscord;
  beforeAll(async () => {
    fake = await startFakeDiscord({ token: TOKEN, applicationId: APP_ID });
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('PUTs the core command list as application commands for a guild', async () => {
    const registered = await registerCommands(loadCommandList(), {
      token: TOKEN,
      applicationId: APP_ID,
      guildId: GUILD_ID,
      apiUrl: fake.apiUrl,
    });
    const call = await fake.waitForCall((c) => c.method === 'PUT');
    expect(call.path).toBe(`/api/v10/applications/${APP_ID}/guilds/${GUILD_ID}/commands`);
    expect(call.authorization).toBe(`Bot ${TOKEN}`);
    const body = call.body as Body;
    expect(registered.map((c) => c.name)).toEqual(body.map((c) => c.name));

    expect(byName(body, 'setup')).toEqual({
      type: 1,
      name: 'setup',
      description: expect.stringContaining('Link this group to a brand'),
      options: [
        { type: 3, name: 'brand_id', description: 'brand id', required: true },
        { type: 3, name: 'security_key', description: 'security key', required: true },
      ],
      default_member_permissions: '32',
      contexts: [0],
      integration_types: [0],
    });
    expect(byName(body, 'daily')).toMatchObject({ options: [], default_member_permissions: null, contexts: [0] });
    expect(byName(body, 'help')).toMatchObject({ contexts: [0, 1] });
    // An optional argument is an optional option.
    expect(byName(body, 'link')).toMatchObject({ options: [{ name: 'code', required: false }] });
    // Discord has no aliases: each alias is its own command.
    expect(byName(body, 'checkin')).toMatchObject({ description: expect.stringMatching(/^Same as \/daily: /) });
    expect(new Set(body.map((c) => c.name)).size).toBe(body.length);
  });

  it('runs as a script: global registration with the environment, errors naming the variable', async () => {
    const env = {
      PATH: process.env.PATH ?? '',
      DISCORD_BOT_TOKEN: TOKEN,
      DISCORD_APPLICATION_ID: APP_ID,
      DISCORD_API_URL: fake.apiUrl,
    };
    const { stdout } = await run(process.execPath, ['--import', 'tsx', script], { env, cwd: repoRoot });
    expect(stdout).toMatch(/^Registered \d+ slash commands for all guilds \(global\): .*\/setup/);
    expect(fake.calls.some((c) => c.method === 'PUT' && c.path === `/api/v10/applications/${APP_ID}/commands`)).toBe(
      true,
    );

    const failed = await run(process.execPath, ['--import', 'tsx', script], {
      env: { PATH: env.PATH, DISCORD_APPLICATION_ID: APP_ID },
      cwd: repoRoot,
    }).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 1, stderr: expect.stringContaining('DISCORD_BOT_TOKEN is required') });

    const refused = await run(process.execPath, ['--import', 'tsx', script], {
      env: { ...env, DISCORD_APPLICATION_ID: snowflake() },
      cwd: repoRoot,
    }).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('Missing Access') });
  });

  it('keeps within Discord rules: names, clipping, required-before-optional, no alias clashes', () => {
    const noop = async () => ({ text: '' });
    const commands = [
      {
        name: 'give',
        aliases: ['daily', 'Bad Alias!'],
        description: 'x'.repeat(150),
        argNames: ['user', 'amount', 'reason'],
        args: z.object({ user: z.string(), amount: z.string().optional(), reason: z.string() }),
        run: noop,
      },
      { name: 'daily', aliases: [], description: 'Daily', argNames: [], args: z.object({}), run: noop },
    ] as unknown as Command[];
    const body = buildSlashCommands(commands);
    expect(body.map((c) => c.name)).toEqual(['give', 'daily']);
    const give = body[0] as { description: string; options: { name: string; required: boolean }[] };
    expect(give.description).toHaveLength(100);
    expect(give.options.map((o) => [o.name, o.required])).toEqual([
      ['user', true],
      ['amount', false],
      ['reason', false],
    ]);
    expect(buildSlashCommands(commands, { includeAliases: false }).map((c) => c.name)).toEqual(['give', 'daily']);
    expect(() => buildSlashCommands([{ ...commands[1], name: 'Not Valid' } as Command])).toThrow(/not a valid Discord/);
  });
});
