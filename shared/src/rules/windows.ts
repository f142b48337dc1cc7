/**
 * Where a moment stands against a time window that opens at `startsAt` and closes at `endsAt`: a drop's
 * claim window. The window includes its start and excludes its end: at `endsAt` exactly it has ended (a
 * claim then is refused as `ended`, and ending a drop "now" sets `endsAt` to now).
 *
 * The server decides with its own clock and reports the status with the drop, so a page whose browser clock
 * runs behind or ahead of the server never shows an ended drop as open (docs/portal.md, "Changing a drop").
 */
export const WINDOW_STATUSES = ['scheduled', 'active', 'ended'] as const;
export type WindowStatus = (typeof WINDOW_STATUSES)[number];

export function windowStatusAt(window: { startsAt: Date; endsAt: Date }, now: Date): WindowStatus {
  if (now.getTime() < window.startsAt.getTime()) return 'scheduled';
  return now.getTime() >= window.endsAt.getTime() ? 'ended' : 'active';
}
