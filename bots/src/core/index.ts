/** The platform-agnostic command core (ARCHITECTURE §6): adapters import only from here. */
export * from './admin-commands.ts';
export * from './chat-roles.ts';
export * from './context.ts';
export * from './participation.ts';
export * from './registry.ts';
export * from './replies.ts';
export type * from './types.ts';
export * from './user-commands.ts';
