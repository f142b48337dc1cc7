import { z } from 'zod';
import { ADMIN_COMMANDS } from './admin-commands.ts';
import { groupContext } from './context.ts';
import { INTERNAL_ERROR, replyForCoreError } from './replies.ts';
import type { BotDeps, Command, CommandInput, Reply } from './types.ts';
import {
  achievementsCommand,
  activityCommand,
  balanceCommand,
  claimCommand,
  claimPerk,
  dailyCommand,
  defineCommand,
  leaderboardCommand,
  linkCommand,
  perksCommand,
  streakCommand,
  tierCommand,
  unlinkCommand,
} from './user-commands.ts';

/** Looks commands up by name or alias and runs them, buttons included; never throws. */
export interface CommandRegistry {
  /** Every command, in `/help` order. */
  readonly commands: readonly Command[];
  /** The command named `name` (or aliased so), case-insensitive. */
  find(name: string): Command | undefined;
  /**
   * Runs `/name rawArgs`: tokens are split on whitespace and mapped onto `argNames` (the last takes the rest),
   * validated with the command's zod schema, admin rights checked. Failures become friendly replies; internal
   * errors are logged with context and answered generically.
   */
  dispatch(name: string, rawArgs: string, input: Omit<CommandInput<unknown>, 'args'>): Promise<Reply | undefined>;
  /** Runs a button's `action` (`milestone:<days>`, `perk:<id>`). */
  press(action: string, input: Omit<CommandInput<unknown>, 'args'>): Promise<Reply>;
}

const HELP_NAME = 'help';

function tokens(raw: string, names: readonly string[]): Record<string, string> {
  const parts = raw.trim() === '' ? [] : raw.trim().split(/\s+/);
  const args: Record<string, string> = {};
  names.forEach((name, i) => {
    const value = i === names.length - 1 ? parts.slice(i).join(' ') : parts[i];
    if (value) args[name] = value;
  });
  return args;
}

function usage(command: Command): string {
  return `/${command.name}${command.argNames.map((n) => ` <${n}>`).join('')}`;
}

function validationReply(command: Command, error: z.ZodError): Reply {
  const first = error.issues[0];
  const message = first?.message ?? 'invalid arguments';
  const where = first?.path.length ? `${String(first.path[0])}: ` : '';
  return {
    text: `${where}${message}. Usage: ${usage(command)}`,
    // A mistake in one's own command is nobody else's business.
    ephemeral: true,
    ...(command.sensitiveArgs ? { sensitiveInput: true } : {}),
  };
}

/** Builds the registry over `commands` (plus `/help`), running them with `deps`. */
export function createCommandRegistry(deps: BotDeps, commands: readonly Command[] = DEFAULT_COMMANDS): CommandRegistry {
  const help = defineCommand({
    name: HELP_NAME,
    aliases: ['start'],
    description: 'What I can do',
    argNames: [],
    args: z.object({}),
    dmAllowed: true,
    run: async () => ({
      title: 'pts commands',
      text: all
        .map((c) => `${usage(c)}${c.aliases.length ? ` (or /${c.aliases.join(', /')})` : ''}: ${c.description}`)
        .join('\n'),
      ephemeral: true,
    }),
  });
  const all: Command[] = [...commands, help as unknown as Command];
  const byName = new Map<string, Command>();
  for (const command of all)
    for (const name of [command.name, ...command.aliases]) byName.set(name.toLowerCase(), command);

  async function guarded(label: Record<string, unknown>, run: () => Promise<Reply>, sensitive = false): Promise<Reply> {
    try {
      const reply = await run();
      return sensitive ? { ...reply, sensitiveInput: true } : reply;
    } catch (error) {
      // A refusal is the caller's business (not enough pts, an unknown perk, a cooldown): only they see it
      // where the platform allows (Discord ephemeral replies).
      const friendly = replyForCoreError(error);
      if (friendly) {
        const refusal = error as { code?: string; status?: number; message?: string };
        deps.logger.info(
          { ...label, code: refusal.code, status: refusal.status, serverMessage: refusal.message },
          'core-api refused',
        );
        return { ...friendly, ephemeral: true, ...(sensitive ? { sensitiveInput: true } : {}) };
      }
      deps.logger.error({ ...label, err: error }, 'command failed');
      return { ...INTERNAL_ERROR, ephemeral: true, ...(sensitive ? { sensitiveInput: true } : {}) };
    }
  }

  return {
    commands: all,
    find: (name) => byName.get(name.toLowerCase()),
    async dispatch(name, rawArgs, input) {
      const command = byName.get(name.toLowerCase());
      if (!command) return undefined;
      const sensitive = command.sensitiveArgs === true;
      const label = {
        command: command.name,
        platform: input.place.platform,
        groupId: input.place.groupId,
        userId: input.user.id,
        ...(sensitive ? {} : { args: rawArgs }),
      };
      return guarded(
        label,
        async () => {
          if (input.place.groupId === null && !command.dmAllowed && command.name !== HELP_NAME) {
            return groupContextReply(command, input, deps);
          }
          if (command.adminOnly && !(await input.isAdmin())) {
            return { text: `Only group admins can use /${command.name}.`, ephemeral: true };
          }
          if (command.name === HELP_NAME) return command.run({ ...input, args: {} }, deps);
          const parsed = command.args.safeParse(tokens(rawArgs, command.argNames));
          if (!parsed.success) return validationReply(command, parsed.error);
          return command.run({ ...input, args: parsed.data }, deps);
        },
        sensitive,
      );
    },
    press(action, input) {
      const [handler, payload = ''] = action.split(':', 2);
      const label = {
        button: action,
        platform: input.place.platform,
        groupId: input.place.groupId,
        userId: input.user.id,
      };
      return guarded(label, async () => {
        if (handler === 'milestone' && /^\d{1,4}$/.test(payload)) {
          const ctx = await groupContext(input.user, input.place, deps);
          if ('reply' in ctx) return ctx.reply;
          const days = Number(payload);
          const result = await ctx.client.claimMilestone(ctx.identityKey, days);
          const name = input.user.displayName ?? input.user.username ?? 'You';
          return { text: `${name} claimed the ${result.milestone}-day streak bonus: +${result.bonusPts} pts.` };
        }
        if (handler === 'perk' && /^[0-9a-fA-F-]{1,36}$/.test(payload)) {
          return claimPerk({ ...input, args: {} }, deps, payload);
        }
        return { text: 'That button is no longer valid.', ephemeral: true };
      });
    },
  };
}

async function groupContextReply(
  command: Command,
  input: Omit<CommandInput<unknown>, 'args'>,
  deps: BotDeps,
): Promise<Reply> {
  const ctx = await groupContext(input.user, input.place, deps);
  if ('reply' in ctx) return command.sensitiveArgs ? { ...ctx.reply, sensitiveInput: true } : ctx.reply;
  throw new Error(`/${command.name}: a direct message resolved to a group`);
}

/** The user commands and admin commands of spec 4.5 (`/help` is added by the registry). */
export const DEFAULT_COMMANDS: readonly Command[] = [
  dailyCommand,
  balanceCommand,
  tierCommand,
  streakCommand,
  leaderboardCommand,
  perksCommand,
  claimCommand,
  activityCommand,
  achievementsCommand,
  linkCommand,
  unlinkCommand,
  ...ADMIN_COMMANDS,
] as unknown as Command[];
