import type { Database } from '../db/database.ts';
import type { AgentToolPorts } from './agent-tool.ts';

/**
 * What the agent's own services (agent/<area>/*-reads.ts, the onboarding, program, rewards and growth
 * services) are built over by the composition root (compose.ts, `composeAgentToolDeps`): the tools' plain
 * values and shared services, and the database handle, which only these services hold (issue 23 §2).
 */
export interface AgentServiceDeps extends AgentToolPorts {
  db: Database;
}

type HandleFirst = (db: Database, ...rest: never[]) => unknown;

/** Each function of `reads` with its leading database handle bound: `(db, …rest)` becomes `(…rest)`. */
export type BoundToDatabase<T extends Record<string, HandleFirst>> = {
  [K in keyof T]: T[K] extends (db: Database, ...rest: infer A) => infer R ? (...rest: A) => R : never;
};

/**
 * Binds the handle into repository and module functions that take it first, so a tool calls
 * `d.networkReads.readNetworkCounts()` and never sees the handle. The names stay the functions' own, so a
 * reader finds the query by name.
 */
export function bindDatabase<T extends Record<string, HandleFirst>>(db: Database, reads: T): BoundToDatabase<T> {
  return Object.fromEntries(
    Object.entries(reads).map(([name, read]) => [
      name,
      (...rest: unknown[]) => (read as (db: Database, ...rest: unknown[]) => unknown)(db, ...rest),
    ]),
  ) as BoundToDatabase<T>;
}

// `never`: any first parameter is accepted here; BoundIntoDeps keeps those whose deps hold the handle.
type DepsFirst = (deps: never, ...rest: never[]) => unknown;

/** Each function of `reads` with the handle bound into its leading deps: `({ db, …deps }, …rest)` becomes `(deps, …rest)`. */
export type BoundIntoDeps<T extends Record<string, DepsFirst>> = {
  [K in keyof T]: T[K] extends (deps: infer D extends { db: Database }, ...rest: infer A) => infer R
    ? (deps: Omit<D, 'db'>, ...rest: A) => R
    : never;
};

/** bindDatabase for module functions whose first argument is a deps object holding the handle among other ports. */
export function bindDatabaseIntoDeps<T extends Record<string, DepsFirst>>(db: Database, reads: T): BoundIntoDeps<T> {
  return Object.fromEntries(
    Object.entries(reads).map(([name, read]) => [
      name,
      (deps: object, ...rest: unknown[]) =>
        (read as (deps: object, ...rest: unknown[]) => unknown)({ ...deps, db }, ...rest),
    ]),
  ) as BoundIntoDeps<T>;
}
