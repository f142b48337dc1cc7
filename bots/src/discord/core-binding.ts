import {
  createCommandRegistry,
  DEFAULT_COMMANDS,
  handleMemberJoined,
  handleMemberRolesChanged,
  handleMessage,
} from '../core/index.ts';
import type { BotDeps, Command } from '../core/types.ts';
import type { DiscordCommandCore } from './bot.ts';

/** The command core bound to `deps`, in the shape the Discord adapter uses. */
export function createDiscordCore(deps: BotDeps, commands: readonly Command[] = DEFAULT_COMMANDS): DiscordCommandCore {
  const registry = createCommandRegistry(deps, commands);
  return {
    commands: registry.commands,
    dispatch: (name, rawArgs, input) => registry.dispatch(name, rawArgs, input),
    press: (action, input) => registry.press(action, input),
    handleMessage: (message) => handleMessage(message, deps),
    handleMemberJoined: (member) => handleMemberJoined(member, deps),
    handleMemberRolesChanged: (change) => handleMemberRolesChanged(change, deps),
  };
}

/**
 * The full command list (with `/help`) for registering slash commands; needs no deps beyond a silent logger
 * because registration never runs a command.
 */
export function loadCommandList(): readonly Command[] {
  const inert = {
    coreClient: () => {
      throw new Error('registering commands does not call core-api');
    },
    groups: {
      get: async () => undefined,
      set: async () => {},
      delete: async () => {},
      list: async () => [],
    },
    logger: undefined as never,
    clock: { now: () => new Date() },
    serviceDomain: 'pts.local',
  } satisfies BotDeps;
  return createCommandRegistry(inert).commands;
}
