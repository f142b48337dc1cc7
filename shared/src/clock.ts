/** Time as a dependency: rules and limits read `now` from a clock so tests can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until told to move; for tests. */
export interface ManualClock extends Clock {
  set(at: Date | string): void;
  advance(ms: number): void;
}

export function createManualClock(start: Date | string = '2026-01-01T00:00:00Z'): ManualClock {
  let current = new Date(start).getTime();
  return {
    now: () => new Date(current),
    set: (at) => {
      current = new Date(at).getTime();
    },
    advance: (ms) => {
      current += ms;
    },
  };
}
