import { randomUUID } from 'node:crypto';
import {
  type ChatGroup,
  type ChatGroupConfig,
  CoreApiError,
  type CoreClient,
  DEFAULT_CHAT_GROUP_CONFIG,
  type EventResponse,
} from '@pts/shared';
import type { BrandCredentials } from '../../src/core/types.ts';

/**
 * An in-memory stand-in for core-api behind the `CoreClient` interface, for the Discord adapter tests (the
 * real core-api end to end is covered by the core's own tests). It keeps one brand, its chat groups,
 * check-ins per UTC day, milestone claims and every event, and refuses a wrong security key like core-api.
 */
export interface FakeCoreApi {
  brandId: string;
  securityKey: string;
  /** Every call made, in order: `[method, args]`. */
  calls: { method: keyof CoreClient; args: unknown[] }[];
  events: { eventType: string; userEmail: string; channel_id?: string }[];
  /** Streak milestones a user may claim (set by the test). */
  unclaimed: Map<string, { days: number; bonus: number }[]>;
  /** Overrides merged into a new group's configuration. */
  groupConfig: Partial<ChatGroupConfig>;
  /** The perk catalogue: id → name, cost and remaining stock. */
  perks: Map<string, { name: string; cost: number; stock: number }>;
  /** Added before check-ins answer (to exercise deferred interaction replies). */
  checkinDelayMs: number;
  /** A client signing as `credentials` (what `BotDeps.coreClient` returns). */
  clientFor(credentials: BrandCredentials): CoreClient;
}

const WALLET = '0x1111111111111111111111111111111111111111';

export function createFakeCoreApi(brandId: string, securityKey: string): FakeCoreApi {
  const groups = new Map<string, ChatGroup>();
  const checkins = new Set<string>();
  const claimed = new Set<string>();
  const api: FakeCoreApi = {
    brandId: brandId.toLowerCase(),
    securityKey,
    calls: [],
    events: [],
    unclaimed: new Map(),
    groupConfig: {},
    perks: new Map(),
    checkinDelayMs: 0,
    clientFor,
  };

  function authorize(credentials: BrandCredentials) {
    if (credentials.brandId.toLowerCase() !== api.brandId || credentials.securityKey !== api.securityKey) {
      throw new CoreApiError(401, 'UNAUTHORIZED', 'Invalid signature');
    }
  }

  function eventResponse(eventType: string, amount: number): EventResponse {
    return {
      success: true,
      eventId: randomUUID(),
      message: 'Event processed',
      rewardAmount: amount,
      eventType,
      walletCreated: false,
      walletAddress: WALLET,
      mintStatus: amount > 0 ? 'submitted' : 'none',
      reward: { amount, eventType, walletAddress: WALLET },
    };
  }

  function clientFor(credentials: BrandCredentials): CoreClient {
    const record = (method: keyof CoreClient, args: unknown[]) => {
      api.calls.push({ method, args });
      authorize(credentials);
    };
    const unused = (method: keyof CoreClient) => async () => {
      throw new Error(`fake core-api: ${method} is not exercised by the Discord tests`);
    };
    return {
      async chatGroupSetup(input) {
        record('chatGroupSetup', [input]);
        const id = `${input.platform}:${input.chatGroupId}`;
        const existing = groups.get(id);
        const now = new Date().toISOString();
        const group: ChatGroup = existing ?? {
          id: randomUUID(),
          chatGroupId: id,
          brandId: api.brandId,
          groupName: input.groupName,
          isActive: true,
          configMetadata: {
            ...DEFAULT_CHAT_GROUP_CONFIG,
            ...api.groupConfig,
            naturalParticipation: {
              ...DEFAULT_CHAT_GROUP_CONFIG.naturalParticipation,
              ...api.groupConfig.naturalParticipation,
            },
          },
          setupBy: input.setupBy,
          setupAt: now,
          createdAt: now,
          updatedAt: now,
        };
        groups.set(id, group);
        return { success: true, chatGroup: group, created: !existing, rulesCreated: existing ? [] : ['daily_checkin'] };
      },
      async chatGroupGet(chatGroupId) {
        record('chatGroupGet', [chatGroupId]);
        const group = groups.get(chatGroupId);
        if (!group) throw new CoreApiError(404, 'NOT_FOUND', `Chat group ${chatGroupId} not found`);
        return group;
      },
      async manualEvent(event) {
        record('manualEvent', [event]);
        const eventType = String(event.eventType);
        const identityKey = String(event.userEmail ?? '');
        const channel = (event as { channel_id?: unknown }).channel_id;
        api.events.push({
          eventType,
          userEmail: identityKey,
          ...(typeof channel === 'string' ? { channel_id: channel } : {}),
        });
        const group = [...groups.values()][0];
        const config = group?.configMetadata ?? DEFAULT_CHAT_GROUP_CONFIG;
        const amount =
          eventType === 'good_morning'
            ? config.naturalParticipation.gmReward
            : eventType === 'good_night'
              ? config.naturalParticipation.gnReward
              : eventType === 'welcome_bonus'
                ? config.welcomeBonus
                : 0;
        return eventResponse(eventType, amount);
      },
      async checkin(identityKey, platform) {
        record('checkin', [identityKey, platform]);
        if (api.checkinDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, api.checkinDelayMs));
        const day = new Date().toISOString().slice(0, 10);
        const key = `${identityKey}|${day}`;
        const alreadyClaimed = checkins.has(key);
        checkins.add(key);
        const unclaimed = (api.unclaimed.get(identityKey) ?? []).filter(
          (m) => !claimed.has(`${identityKey}|${m.days}`),
        );
        return {
          success: true,
          streak: {
            currentStreak: 3,
            multiplier: 1,
            nextMilestone: { days: 7, bonus: 70, daysRemaining: 4 },
            unclaimedMilestones: unclaimed,
          },
          reward: alreadyClaimed ? 0 : 10,
          alreadyClaimed,
          day,
          eventId: alreadyClaimed ? null : randomUUID(),
          walletAddress: WALLET,
        };
      },
      async claimMilestone(identityKey, milestoneDays) {
        record('claimMilestone', [identityKey, milestoneDays]);
        const milestone = (api.unclaimed.get(identityKey) ?? []).find((m) => m.days === milestoneDays);
        if (!milestone) throw new CoreApiError(400, 'MILESTONE_NOT_REACHED', `Milestone ${milestoneDays} not reached`);
        const key = `${identityKey}|${milestoneDays}`;
        if (claimed.has(key)) throw new CoreApiError(409, 'MILESTONE_ALREADY_CLAIMED', 'Milestone already claimed');
        claimed.add(key);
        return {
          success: true,
          bonusPts: milestone.bonus,
          milestone: milestoneDays,
          eventId: randomUUID(),
          walletAddress: WALLET,
        };
      },
      bulkEvents: unused('bulkEvents'),
      eventConfig: unused('eventConfig'),
      recordStreakActivity: unused('recordStreakActivity'),
      streakStatus: unused('streakStatus'),
      leaderboard: unused('leaderboard'),
      achievements: unused('achievements'),
      balance: unused('balance'),
      tier: unused('tier'),
      reportAchievementProgress: unused('reportAchievementProgress'),
      activity: unused('activity'),
      perks: unused('perks'),
      checkEligibility: unused('checkEligibility'),
      async redeemPerk(input) {
        record('redeemPerk', [input]);
        const id = String(input.perkId);
        const perk = api.perks.get(id);
        if (!perk) throw new CoreApiError(404, 'PERK_NOT_FOUND', `Perk ${id} not found`);
        if (perk.stock <= 0) throw new CoreApiError(409, 'OUT_OF_STOCK', `${perk.name} is out of stock`);
        perk.stock -= 1;
        return {
          success: true,
          confirmationCode: `PTS-${randomUUID().slice(0, 8).toUpperCase()}`,
          perk: { id, name: perk.name, cost: perk.cost, category: 'general' },
        };
      },
      chatGroupUpdate: unused('chatGroupUpdate'),
      chatGroupDeactivate: unused('chatGroupDeactivate'),
      activeCampaigns: unused('activeCampaigns'),
      xBotSettings: unused('xBotSettings'),
      pregenerateUser: unused('pregenerateUser'),
      linkCode: unused('linkCode'),
      linkConfirm: unused('linkConfirm'),
      linkRevoke: unused('linkRevoke'),
      async reportChatRoles(input) {
        record('reportChatRoles', [input]);
        return { success: true as const, refreshedAt: new Date().toISOString(), roles: [...new Set(input.roles)] };
      },
      unlink: unused('unlink'),
      signed: unused('signed'),
    };
  }
  return api;
}
