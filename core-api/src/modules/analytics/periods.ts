/** The windows analytics are read over: half-open `[from, to)`, whole days. */

export type Period = '7d' | '30d' | '90d';
export const PERIODS = ['7d', '30d', '90d'] as const;
export const DAY_MS = 86_400_000;

/** A half-open window `[from, to)`. */
export interface TimeWindow {
  from: Date;
  to: Date;
  days: number;
}

/** The period's window ending at `now`, and the window of the same length just before it. */
export function periodWindows(now: Date, period: Period): { current: TimeWindow; previous: TimeWindow } {
  const days = Number.parseInt(period, 10);
  const from = new Date(now.getTime() - days * DAY_MS);
  return {
    current: { from, to: now, days },
    previous: { from: new Date(from.getTime() - days * DAY_MS), to: from, days },
  };
}
