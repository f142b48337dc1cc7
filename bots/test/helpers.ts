import { type CoreClient, createManualClock, type ManualClock } from '@pts/shared';
import pino from 'pino';
import type { BotDeps, BrandCredentials, ChatPlatform, GroupStore } from '../src/core/types.ts';

/** A GroupStore in memory (tests of the core; the file store has its own tests). */
export function memoryGroupStore(): GroupStore & { entries: Map<string, BrandCredentials> } {
  const entries = new Map<string, BrandCredentials>();
  const key = (platform: ChatPlatform, groupId: string) => `${platform}:${groupId}`;
  return {
    entries,
    get: async (platform, groupId) => entries.get(key(platform, groupId)),
    set: async (platform, groupId, credentials) => {
      entries.set(key(platform, groupId), credentials);
    },
    delete: async (platform, groupId) => {
      entries.delete(key(platform, groupId));
    },
    list: async (platform) =>
      [...entries.keys()].filter((k) => k.startsWith(`${platform}:`)).map((k) => k.slice(platform.length + 1)),
  };
}

/**
 * A hand-written CoreClient: every method throws "unexpected call" unless the test gives it; the calls made
 * are recorded with their arguments.
 */
export function fakeCoreClient(
  methods: Partial<CoreClient>,
): CoreClient & { calls: { method: string; args: unknown[] }[] } {
  const calls: { method: string; args: unknown[] }[] = [];
  return new Proxy({ calls } as CoreClient & { calls: typeof calls }, {
    get(_target, property) {
      if (property === 'calls') return calls;
      if (typeof property !== 'string') return undefined;
      return (...args: unknown[]) => {
        calls.push({ method: property, args });
        const method = (methods as Record<string, (...a: unknown[]) => unknown>)[property];
        if (!method) throw new Error(`unexpected call ${property}`);
        return method(...args);
      };
    },
  });
}

export const BRAND: BrandCredentials = {
  brandId: '0x1111111111111111111111111111111111111111',
  securityKey: 'pts_sk_test_key_never_logged',
};

/** Deps over a fake client (or a client factory), a memory store, a silent logger and a manual clock. */
export function testDeps(
  client: CoreClient | ((credentials: BrandCredentials) => CoreClient),
  options: { clock?: ManualClock; groups?: GroupStore } = {},
): BotDeps & { clock: ManualClock; groups: ReturnType<typeof memoryGroupStore> | GroupStore } {
  return {
    coreClient: typeof client === 'function' ? client : () => client,
    groups: options.groups ?? memoryGroupStore(),
    logger: pino({ level: process.env.PTS_TEST_LOG_LEVEL ?? 'silent' }),
    clock: options.clock ?? createManualClock(new Date('2026-03-10T20:47:00Z')),
    serviceDomain: 'pts.local',
  };
}
