import { randomUUID } from 'node:crypto';
import {
  AppError,
  CHAT_GROUP_ID_PATTERN,
  CHAT_GROUP_PLATFORMS,
  type ChatGroup,
  type ChatGroupConfig,
  type ChatGroupConfigPatch,
  type Clock,
  chatGroupConfigSchema,
  DEFAULT_CHAT_GROUP_CONFIG,
  type Rule,
  type RuleSettings,
} from '@pts/shared';
import type { Kysely, Selectable } from 'kysely';
import type { ChatGroupsTable, DB } from '../../db/schema.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import type { ChangeNotifier } from '../brands/brand-changes.ts';
import { findRuleByEventType, insertAuditEntry, toRule } from '../brands/brands.repository.ts';
import { setRule } from '../brands/brands.service.ts';

type ChatGroupRow = Selectable<ChatGroupsTable>;

/** What the chat group service needs; the brand-service parts create missing rules. */
export interface ChatGroupDeps {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  /** Required: the rules written here must reach every rule cache at once. */
  changes: ChangeNotifier;
  /**
   * Who the brand's audit log names for a chat group change: `brand-key` (default: the bots' `/setup`, which
   * checks the brand's security key, and their brand-signed changes) or `portal:<email>`.
   */
  actor?: string;
}

/** A chat group change in the audit log of `brandId` (chat group changes are integration changes). */
function auditChatGroup(
  deps: Pick<ChatGroupDeps, 'db' | 'clock' | 'actor'>,
  brandId: string,
  action: string,
  chatGroupId: string,
  details: Record<string, unknown>,
) {
  return insertAuditEntry(deps.db, {
    actor: deps.actor ?? 'brand-key',
    action,
    subject: chatGroupId,
    brandId,
    details,
    at: deps.clock.now(),
  });
}

/** A verified `/setup`: the brand's key was already checked. */
export interface ChatGroupSetupInput {
  brandId: string;
  platform: string;
  chatGroupId: string;
  groupName: string;
  setupBy: string;
}

/**
 * The full stored id `<platform>:<group id>`: a bare platform id gets the platform prefix; an id that
 * already carries a prefix must carry this platform's.
 */
export function qualifiedChatGroupId(platform: string, chatGroupId: string): string {
  const givenPrefix = CHAT_GROUP_PLATFORMS.find((name) => chatGroupId.startsWith(`${name}:`));
  const prefixed = givenPrefix ? chatGroupId : `${platform}:${chatGroupId}`;
  if ((givenPrefix && givenPrefix !== platform) || !CHAT_GROUP_ID_PATTERN.test(prefixed)) {
    throw new AppError(
      'VALIDATION_ERROR',
      `Invalid chatGroupId "${chatGroupId}": give the ${platform} group id (1 to 100 letters, digits or _.@!:-) or ${platform}:<id>`,
      { field: 'chatGroupId', value: chatGroupId },
    );
  }
  return prefixed;
}

/** The rules a chat group's configuration pays through, with the amounts of that configuration. */
export function chatRulesFor(config: ChatGroupConfig): RuleSettings[] {
  const unlimited = -1;
  return [
    // One check-in per UTC day is enforced by the check-ins table (docs/streaks.md), so no cooldown.
    { eventType: 'daily_checkin', rewardAmount: config.dailyReward, cooldownHours: 0, maxClaims: unlimited },
    // Milestone bonuses come from the streak settings; the rule must exist and be active.
    { eventType: 'streak_milestone', rewardAmount: 0, cooldownHours: 0, maxClaims: unlimited },
    {
      eventType: 'good_morning',
      rewardAmount: config.naturalParticipation.gmReward,
      cooldownHours: config.naturalParticipation.gmCooldownHours,
      maxClaims: unlimited,
    },
    {
      eventType: 'good_night',
      rewardAmount: config.naturalParticipation.gnReward,
      cooldownHours: config.naturalParticipation.gnCooldownHours,
      maxClaims: unlimited,
    },
    { eventType: 'welcome_bonus', rewardAmount: config.welcomeBonus, cooldownHours: 0, maxClaims: 1 },
  ] as RuleSettings[];
}

/**
 * Links the group to the brand (creating the record, re-linking it from another brand, or reactivating it)
 * and creates the rules its configuration pays through that the brand does not have yet. A group that
 * stays with its brand keeps its configuration; one that moves to another brand starts from the defaults.
 */
export async function setupChatGroup(
  deps: ChatGroupDeps,
  input: ChatGroupSetupInput,
): Promise<{ chatGroup: ChatGroup; created: boolean; rulesCreated: string[] }> {
  const now = deps.clock.now();
  const chatGroupId = qualifiedChatGroupId(input.platform, input.chatGroupId);
  const link = async (trx: Kysely<DB>) => {
    // Insert-or-nothing first so concurrent setups of a new group serialize on the row lock below.
    const inserted = await trx
      .insertInto('chat_groups')
      .values({
        id: randomUUID(),
        chat_group_id: chatGroupId,
        brand_id: input.brandId,
        group_name: input.groupName,
        is_active: true,
        config_metadata: JSON.stringify(DEFAULT_CHAT_GROUP_CONFIG),
        setup_by: input.setupBy,
        setup_at: now,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.column('chat_group_id').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) return { row: inserted, created: true, previousBrandId: undefined };
    const existing = await trx
      .selectFrom('chat_groups')
      .selectAll()
      .where('chat_group_id', '=', chatGroupId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const sameBrand = existing.brand_id === input.brandId;
    const row = await trx
      .updateTable('chat_groups')
      .set({
        brand_id: input.brandId,
        group_name: input.groupName,
        is_active: true,
        config_metadata: JSON.stringify(sameBrand ? readConfig(existing) : DEFAULT_CHAT_GROUP_CONFIG),
        setup_by: input.setupBy,
        setup_at: now,
        updated_at: now,
      })
      .where('id', '=', existing.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { row, created: false, previousBrandId: sameBrand ? undefined : existing.brand_id };
  };
  const { row, created } = await deps.db.transaction().execute(async (trx) => {
    const linked = await link(trx);
    const audited = { ...deps, db: trx };
    // The group leaves the other brand's integrations: its log says so (without naming the new brand).
    if (linked.previousBrandId) {
      await auditChatGroup(audited, linked.previousBrandId, 'chat_group.unlink', chatGroupId, {
        reason: 'set up for another brand',
      });
    }
    await auditChatGroup(audited, input.brandId, 'chat_group.setup', chatGroupId, {
      groupName: input.groupName,
      setupBy: input.setupBy,
      created: linked.created,
    });
    return linked;
  });
  const rulesCreated = await ensureChatRules(deps, input.brandId, readConfig(row));
  return { chatGroup: toChatGroup(row), created, rulesCreated };
}

/**
 * Creates the chat rules the brand lacks (through the brands service); existing rules are left alone.
 * Concurrent setups serialize on the brand row, so each missing rule is created, and reported, once; the
 * rule caches hear about it after the commit.
 */
async function ensureChatRules(deps: ChatGroupDeps, brandId: string, config: ChatGroupConfig): Promise<string[]> {
  const created = await deps.db.transaction().execute(async (trx) => {
    await trx.selectFrom('brands').select('address').where('address', '=', brandId).forUpdate().execute();
    const created: string[] = [];
    for (const rule of chatRulesFor(config)) {
      if (await findRuleByEventType(trx, brandId, rule.eventType)) continue;
      await setRule({ db: trx, secrets: deps.secrets, clock: deps.clock, actor: 'chat-group-setup' }, brandId, rule);
      created.push(rule.eventType);
    }
    return created;
  });
  if (created.length > 0) deps.changes.emit({ kind: 'rules', brandId });
  return created;
}

/** The record, or 404. */
export async function getChatGroup(deps: Pick<ChatGroupDeps, 'db'>, chatGroupId: string): Promise<ChatGroup> {
  return toChatGroup(await findOrThrow(deps.db, chatGroupId));
}

/** The groups the bots set up for a brand (active or not), newest first. */
export async function listBrandChatGroups(db: Kysely<DB>, brandId: string): Promise<ChatGroup[]> {
  const rows = await db
    .selectFrom('chat_groups')
    .selectAll()
    .where('brand_id', '=', brandId.toLowerCase())
    .orderBy('setup_at', 'desc')
    .execute();
  return rows.map(toChatGroup);
}

/** The brand a group is linked to, or undefined for an unknown group. */
export async function chatGroupBrand(db: Kysely<DB>, chatGroupId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('chat_groups')
    .select('brand_id')
    .where('chat_group_id', '=', chatGroupId)
    .executeTakeFirst();
  return row?.brand_id;
}

/**
 * Deep-merges validated configuration changes (and a new name) into the record, under its row lock. A
 * changed reward or cooldown is also written to the brand's rule for that event type (the rules are what
 * the event pipeline pays; they are per brand, so the brand's groups share them and the last change wins);
 * the rule's other settings (max claims, channels, …) are kept.
 */
export async function updateChatGroup(
  deps: ChatGroupDeps,
  chatGroupId: string,
  input: { groupName?: string | undefined; configMetadata?: ChatGroupConfigPatch | undefined },
): Promise<{ chatGroup: ChatGroup; rulesUpdated: string[] }> {
  const { row, rulesUpdated } = await deps.db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('chat_groups')
      .selectAll()
      .where('chat_group_id', '=', chatGroupId)
      .forUpdate()
      .executeTakeFirst();
    if (!existing) throw chatGroupNotFound(chatGroupId);
    const before = readConfig(existing);
    const merged = mergeConfig(before, input.configMetadata ?? {});
    const row = await trx
      .updateTable('chat_groups')
      .set({
        config_metadata: JSON.stringify(merged),
        ...(input.groupName !== undefined ? { group_name: input.groupName } : {}),
        updated_at: deps.clock.now(),
      })
      .where('id', '=', existing.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const rulesUpdated = await syncChangedRules({ ...deps, db: trx }, existing.brand_id, before, merged);
    await auditChatGroup({ ...deps, db: trx }, existing.brand_id, 'chat_group.update', chatGroupId, {
      ...input,
      ...(rulesUpdated.length > 0 ? { rulesUpdated } : {}),
    });
    return { row, rulesUpdated };
  });
  if (rulesUpdated.length > 0) deps.changes.emit({ kind: 'rules', brandId: row.brand_id });
  return { chatGroup: toChatGroup(row), rulesUpdated };
}

/**
 * Writes to the brand's rule only what the group's edit changed: a changed reward becomes the rule's reward,
 * a changed cooldown (good morning / good night have their own) its cooldown. Everything else the rule
 * holds stays as the brand set it — its cooldown, claim limits, channels, detection (issue 33 §4: a group's
 * daily reward once reset the brand's 20 h `daily_checkin` cooldown to 0 and its claims to unlimited). A rule
 * the brand does not have yet is created with the group's defaults. The audit log names who made the change.
 */
async function syncChangedRules(
  deps: ChatGroupDeps,
  brandId: string,
  before: ChatGroupConfig,
  after: ChatGroupConfig,
): Promise<string[]> {
  const previous = new Map(chatRulesFor(before).map((rule) => [rule.eventType, rule]));
  const updated: string[] = [];
  for (const wanted of chatRulesFor(after)) {
    const old = previous.get(wanted.eventType);
    const rewardChanged = !old || old.rewardAmount !== wanted.rewardAmount;
    const cooldownChanged = !old || old.cooldownHours !== wanted.cooldownHours;
    if (!rewardChanged && !cooldownChanged) continue;
    const current = await findRuleByEventType(deps.db, brandId, wanted.eventType);
    const settings: RuleSettings = current
      ? {
          ...ruleSettingsOf(toRule(current)),
          ...(rewardChanged ? { rewardAmount: wanted.rewardAmount } : {}),
          ...(cooldownChanged ? { cooldownHours: wanted.cooldownHours } : {}),
        }
      : wanted;
    await setRule(
      { db: deps.db, secrets: deps.secrets, clock: deps.clock, actor: deps.actor ?? 'chat-group-config' },
      brandId,
      settings,
    );
    updated.push(wanted.eventType);
  }
  return updated;
}

function ruleSettingsOf(rule: Rule): RuleSettings {
  return {
    eventType: rule.eventType,
    rewardAmount: rule.rewardAmount,
    cooldownHours: rule.cooldownHours,
    maxClaims: rule.maxClaims,
    maxTotal: rule.maxTotal,
    detectionMethod: rule.detectionMethod,
    detectionConfig: rule.detectionConfig,
    active: rule.active,
  };
}

/** Marks the group inactive (a later `/setup` reactivates it). */
export async function deactivateChatGroup(
  deps: Pick<ChatGroupDeps, 'db' | 'clock' | 'actor'>,
  chatGroupId: string,
): Promise<ChatGroup> {
  const row = await deps.db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('chat_groups')
      .set({ is_active: false, updated_at: deps.clock.now() })
      .where('chat_group_id', '=', chatGroupId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw chatGroupNotFound(chatGroupId);
    await auditChatGroup({ ...deps, db: trx }, row.brand_id, 'chat_group.deactivate', chatGroupId, {
      groupName: row.group_name,
    });
    return row;
  });
  return toChatGroup(row);
}

/** `patch` over `config`, one level deep into `naturalParticipation`. */
export function mergeConfig(config: ChatGroupConfig, patch: ChatGroupConfigPatch): ChatGroupConfig {
  const { naturalParticipation, ...top } = patch;
  const defined = <T extends object>(value: T) =>
    Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
  return {
    ...config,
    ...defined(top),
    naturalParticipation: { ...config.naturalParticipation, ...defined(naturalParticipation ?? {}) },
  };
}

/** The stored configuration over the defaults (keys a hand edit removed fall back to them). */
function readConfig(row: ChatGroupRow): ChatGroupConfig {
  const stored = (row.config_metadata ?? {}) as Partial<ChatGroupConfig>;
  const merged = {
    ...DEFAULT_CHAT_GROUP_CONFIG,
    ...stored,
    naturalParticipation: { ...DEFAULT_CHAT_GROUP_CONFIG.naturalParticipation, ...(stored.naturalParticipation ?? {}) },
  };
  const parsed = chatGroupConfigSchema.safeParse(merged);
  return parsed.success ? parsed.data : { ...DEFAULT_CHAT_GROUP_CONFIG };
}

function toChatGroup(row: ChatGroupRow): ChatGroup {
  return {
    id: row.id,
    chatGroupId: row.chat_group_id,
    brandId: row.brand_id,
    groupName: row.group_name,
    isActive: row.is_active,
    configMetadata: readConfig(row),
    setupBy: row.setup_by,
    setupAt: row.setup_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

async function findOrThrow(db: Kysely<DB>, chatGroupId: string): Promise<ChatGroupRow> {
  const row = await db
    .selectFrom('chat_groups')
    .selectAll()
    .where('chat_group_id', '=', chatGroupId)
    .executeTakeFirst();
  if (!row) throw chatGroupNotFound(chatGroupId);
  return row;
}

/** 404 for a group nobody set up. */
export function chatGroupNotFound(chatGroupId: string): AppError {
  return new AppError(
    'NOT_FOUND',
    `No chat group ${chatGroupId}; run /setup <brand_id> <security_key> in the group first`,
    { field: 'chatGroupId', value: chatGroupId },
  );
}
