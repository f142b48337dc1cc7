/**
 * The one window rule for drops (claim window), perks (redemption window) and hashtag campaigns (posting
 * window): where a moment stands against a window that opens at `startsAt` and closes at `endsAt`. The
 * window includes its start and excludes its end: at `endsAt` exactly it has ended (a claim, a redemption or a
 * campaign post then is refused, and ending a drop or a campaign "now" sets its end to now). A perk's open
 * end (`null`) means no bound on that side.
 *
 * The server decides with its own clock and reports the status with the drop, the perk and the campaign, so
 * a page whose browser clock runs behind or ahead of the server never shows an ended window as open
 * (docs/decisions.md, "One window rule, the server's clock").
 */
export const WINDOW_STATUSES = ['scheduled', 'active', 'ended'] as const;
export type WindowStatus = (typeof WINDOW_STATUSES)[number];

/** A window's bounds: a `Date`, an ISO 8601 string, or `null` for an open side. */
export interface TimeWindow {
  startsAt: Date | string | null;
  endsAt: Date | string | null;
}

const timeOf = (moment: Date | string) => (typeof moment === 'string' ? Date.parse(moment) : moment.getTime());

/** Where `now` stands against the window: before its start, inside it, or at or after its end. */
export function windowStatusAt(window: TimeWindow, now: Date): WindowStatus {
  const time = now.getTime();
  if (window.startsAt !== null && time < timeOf(window.startsAt)) return 'scheduled';
  return window.endsAt !== null && time >= timeOf(window.endsAt) ? 'ended' : 'active';
}

/** Whether `now` is inside the window (start included, end excluded). */
export function isWithinWindow(window: TimeWindow, now: Date): boolean {
  return windowStatusAt(window, now) === 'active';
}
