import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createManualClock } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRAND, memoryGroupStore, testDeps } from '../../test/helpers.ts';
import { createCoreClients } from './core-clients.ts';
import { createCommandRegistry } from './registry.ts';
import type { CommandInput } from './types.ts';

// Members read what core-api refused in words written for them: never an internal identity
// (`telegram_3900@pts.local`) nor a server message passed through (issue 24 §8). The real typed client
// talks to a local HTTP server that answers as core-api does.

let server: Server;
let baseUrl: string;
let answer: { status: number; body: unknown } = { status: 500, body: {} };

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function run(command: string, args: string) {
  const clock = createManualClock(new Date());
  const groups = memoryGroupStore();
  await groups.set('telegram', '-100', BRAND);
  const deps = testDeps(createCoreClients({ baseUrl, clock }), { clock, groups });
  const input: Omit<CommandInput<unknown>, 'args'> = {
    user: { platform: 'telegram', id: '3900', displayName: 'Tess' },
    place: { platform: 'telegram', groupId: '-100', channelId: '-100', typedInPublic: true },
    isAdmin: async () => false,
  };
  const reply = await createCommandRegistry(deps).dispatch(command, args, input);
  return reply!.text;
}

describe('member-facing answers to core-api refusals', () => {
  it('a member without tokens is told so, without their internal identity', async () => {
    answer = {
      status: 400,
      body: {
        success: false,
        error: 'telegram_3900@pts.local has no tokens yet: a user gets a wallet with their first reward',
        code: 'NO_WALLET',
        details: { field: 'userIdentifier', value: 'telegram_3900@pts.local', reason: 'no_wallet' },
      },
    };
    const text = await run('claim', '1');
    expect(text).toMatch(/no pts yet.*\/daily/);
    expect(text).not.toMatch(/pts\.local|telegram_3900/);
  });

  it('an unknown 4xx is a generic sentence, never the server text', async () => {
    answer = {
      status: 403,
      body: {
        success: false,
        error: 'perk 1 belongs to brand 0xabc (internal check in redemption.service.ts)',
        code: 'PERK_BRAND_MISMATCH',
      },
    };
    const text = await run('claim', '1');
    expect(text).toMatch(/could not do that for you right now/);
    expect(text).not.toMatch(/0xabc|redemption\.service|internal check/);
  });

  it('a validation refusal does not echo the server message', async () => {
    answer = {
      status: 400,
      body: {
        success: false,
        error: 'Invalid request body: userIdentifier telegram_3900@pts.local is not allowed here',
        code: 'VALIDATION_ERROR',
      },
    };
    const text = await run('claim', '1');
    expect(text).not.toMatch(/pts\.local|Invalid request body/);
  });

  it('a milestone refusal is told in words for members, not the server text', async () => {
    answer = {
      status: 400,
      body: {
        success: false,
        error: "The milestone bonus was refused by the brand's rule: telegram_3900@pts.local max claims",
        code: 'CLAIM_FAILED',
        details: { reason: 'reward_refused', milestone: 7 },
      },
    };
    const clock = createManualClock(new Date());
    const groups = memoryGroupStore();
    await groups.set('telegram', '-100', BRAND);
    const deps = testDeps(createCoreClients({ baseUrl, clock }), { clock, groups });
    const reply = await createCommandRegistry(deps).press('milestone:7', {
      user: { platform: 'telegram', id: '3900', displayName: 'Tess' },
      place: { platform: 'telegram', groupId: '-100', channelId: '-100' },
      isAdmin: async () => false,
    });
    expect(reply.text).toMatch(/7-day milestone bonus cannot be paid/);
    expect(reply.text).not.toMatch(/pts\.local/);
  });
});
