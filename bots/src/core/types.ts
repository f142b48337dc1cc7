import type { Clock, CoreClient } from '@pts/shared';
import type { Logger } from 'pino';
import type { z } from 'zod';

/**
 * The command core's neutral model (ARCHITECTURE §6, CONVENTIONS habit 8): adapters translate platform
 * updates into these inputs and render `Reply` on their platform. The core never imports a platform SDK and
 * reaches core-api only through the typed client.
 */
export type ChatPlatform = 'discord' | 'telegram';

/** Who acted. `id` is the platform's user id (a Discord snowflake, a Telegram user id). */
export interface ChatUser {
  platform: ChatPlatform;
  id: string;
  username?: string;
  displayName?: string;
  isBot?: boolean;
}

/** Where it happened. `groupId` is the guild / group chat id, null in a direct message. */
export interface ChatPlace {
  platform: ChatPlatform;
  groupId: string | null;
  groupName?: string;
  /** The channel (Discord) or the chat itself (Telegram); travels as `channel_id` on events. */
  channelId: string | null;
  channelName?: string;
  /**
   * Other members read what the user typed here (a Telegram group). Discord slash commands answered
   * ephemerally are seen by the user alone, so a secret argument there stays private.
   */
  typedInPublic?: boolean;
}

/** What a command (or a button, or a message) runs with. */
export interface CommandInput<Args> {
  user: ChatUser;
  place: ChatPlace;
  args: Args;
  /** Asks the platform whether the user administers this group (real permissions: Discord Manage Guild, Telegram administrator/creator). */
  isAdmin(): Promise<boolean>;
  /**
   * Turns a user reference typed in a command (`@username`, a mention) into the platform user id, when the
   * adapter can (Telegram: text mentions and members seen in the group); numeric ids need no resolving.
   */
  resolveUser?(reference: string): Promise<string | undefined>;
  /**
   * The member's current roles in this group, when the adapter can read them (Discord role ids, Telegram
   * member status); reported to core-api for `chat_role` perk constraints. Undefined when unknown.
   */
  memberRoles?(): Promise<string[] | undefined>;
  /**
   * In a direct message: the groups set up with `/setup` that the user is a member of (the brands a code
   * typed here may belong to), when the adapter can tell.
   */
  memberGroups?(): Promise<string[]>;
}

export type ButtonStyle = 'primary' | 'secondary' | 'success' | 'danger';

/** A button; `action` is routed back to the core's button handlers (`<handler>:<payload>`, ≤ 64 bytes). */
export interface ReplyButton {
  action: string;
  label: string;
  style?: ButtonStyle;
}

/** A platform-neutral answer: adapters render text, fields and buttons their own way. */
export interface Reply {
  text: string;
  title?: string;
  fields?: { name: string; value: string; inline?: boolean }[];
  buttons?: ReplyButton[];
  /** Only the user sees it (Discord ephemeral replies; Telegram answers in private when it can). */
  ephemeral?: boolean;
  /**
   * The reply itself is a secret for this user alone (a link code): never posted where others read it.
   * Discord answers ephemerally; Telegram sends it in a private chat, or says how to open one.
   */
  secret?: boolean;
  /** The message that triggered this reply held a secret (`/setup`'s key): delete it when the platform allows. */
  sensitiveInput?: boolean;
}

/** One command: `/name` or any alias, arguments validated by `args` (positional tokens map onto `argNames`). */
export interface Command<Schema extends z.ZodType = z.ZodType> {
  name: string;
  aliases: readonly string[];
  description: string;
  /** Names of the positional arguments, in order (`/setup <brand_id> <security_key>`). */
  argNames: readonly string[];
  args: Schema;
  /** Group admins only (checked with `isAdmin`). */
  adminOnly?: boolean;
  /** Whether it makes sense in a direct message. */
  dmAllowed?: boolean;
  /** The arguments hold a secret: replies carry `sensitiveInput`, arguments are never logged or echoed. */
  sensitiveArgs?: boolean;
  run(input: CommandInput<z.output<Schema>>, deps: BotDeps): Promise<Reply>;
}

/** A brand's credentials for signing core-api requests on behalf of one group. */
export interface BrandCredentials {
  brandId: string;
  securityKey: string;
}

/** Which brand each group was set up for (`/setup`); secrets encrypted at rest. */
export interface GroupStore {
  get(platform: ChatPlatform, groupId: string): Promise<BrandCredentials | undefined>;
  set(platform: ChatPlatform, groupId: string, credentials: BrandCredentials): Promise<void>;
  delete(platform: ChatPlatform, groupId: string): Promise<void>;
  /** The ids of the platform's groups that were set up. */
  list(platform: ChatPlatform): Promise<string[]>;
}

/** Everything commands may touch; passed, never imported. */
export interface BotDeps {
  /** A client signing as the given brand. */
  coreClient(credentials: BrandCredentials): CoreClient;
  groups: GroupStore;
  logger: Logger;
  clock: Clock;
  /** The domain of synthetic identities: `<platform>_<id>@<serviceDomain>`. */
  serviceDomain: string;
}
