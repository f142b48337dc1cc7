/**
 * Periods as people ask for them ("today", "this week", "over the last 30 days") and as the tools take
 * them. Two vocabularies exist among the agent tools: rolling windows ending now (`7d`, `30d`, `90d`: the
 * analytics, comparisons and trends) and calendar periods (`daily`, `weekly`, `monthly`, `all_time`: the
 * leaderboards). A question's period is translated to the tool's vocabulary; when the tool has no exact
 * match the nearest one is used and a note says so in plain words (docs/agent-api/converse-mcp.md).
 */

export type CalendarPeriod = 'daily' | 'weekly' | 'monthly' | 'all_time';

export interface RequestedPeriod {
  /** The period in the asker's words, for notes ("today", "this month", "the last 30 days"). */
  phrase: string;
  /** Length in days of the window asked for; null for all time. */
  days: number | null;
  /** The calendar period asked for, when the question named one ("this week"); null for a rolling window. */
  calendar: CalendarPeriod | null;
}

interface PeriodPattern {
  pattern: RegExp;
  period: (match: RegExpMatchArray) => RequestedPeriod;
}

/** In order: the first pattern that matches decides ("last 30 days" before "month"). */
const PATTERNS: PeriodPattern[] = [
  {
    pattern: /\b(today|so far today|past 24 hours|last 24 hours)\b/i,
    period: () => ({ phrase: 'today', days: 1, calendar: 'daily' }),
  },
  {
    pattern: /\b(?:last|past|previous)\s+(\d{1,3})\s+days?\b/i,
    period: (m) => ({ phrase: `the last ${m[1]} days`, days: Number(m[1]), calendar: null }),
  },
  {
    pattern: /\b(\d{1,3})[ -]?(?:d|days?)\b/i,
    period: (m) => ({ phrase: `the last ${m[1]} days`, days: Number(m[1]), calendar: null }),
  },
  {
    pattern: /\b(?:last|past|previous)\s+week\b/i,
    period: () => ({ phrase: 'the last 7 days', days: 7, calendar: null }),
  },
  {
    pattern: /\b(this week|weekly|week)\b/i,
    period: () => ({ phrase: 'this week', days: 7, calendar: 'weekly' }),
  },
  {
    pattern: /\b(?:last|past|previous)\s+month\b/i,
    period: () => ({ phrase: 'the last 30 days', days: 30, calendar: null }),
  },
  {
    pattern: /\b(this month|monthly|month)\b/i,
    period: () => ({ phrase: 'this month', days: 30, calendar: 'monthly' }),
  },
  {
    pattern: /\b(quarter|quarterly|3 months|three months)\b/i,
    period: () => ({ phrase: 'the last 90 days', days: 90, calendar: null }),
  },
  {
    pattern: /\b(all[- ]time|ever|overall|since the start)\b/i,
    period: () => ({ phrase: 'all time', days: null, calendar: 'all_time' }),
  },
];

/** The period a question asks about, or undefined when it names none. */
export function requestedPeriod(question: string): RequestedPeriod | undefined {
  for (const { pattern, period } of PATTERNS) {
    const match = question.match(pattern);
    if (match) return period(match);
  }
  return undefined;
}

export interface PeriodChoice {
  /** The value to pass as the tool's `period`, or undefined to pass none. */
  value: string | undefined;
  /** Said to the asker when the tool cannot answer exactly the period asked for. */
  note: string | undefined;
}

/**
 * A rolling window among the tool's (`['7d', '30d', '90d']`): the exact length, else the shortest window
 * that covers the one asked for, else the longest; with a note whenever it is not the exact window asked.
 */
export function rollingPeriod(tool: string, asked: RequestedPeriod, windows: string[]): PeriodChoice {
  const lengths = windows
    .map((window) => Number(/^(\d+)d$/.exec(window)?.[1]))
    .filter((days) => Number.isFinite(days))
    .sort((a, b) => a - b);
  if (lengths.length === 0) return forAllTime(tool, asked);
  const longest = lengths[lengths.length - 1] as number;
  if (asked.days === null) {
    return { value: `${longest}d`, note: `${tool} has no all-time window; this answers the last ${longest} days.` };
  }
  const exact = lengths.includes(asked.days);
  const days = exact ? asked.days : (lengths.find((length) => length >= asked.days!) ?? longest);
  if (exact && asked.calendar === null) return { value: `${days}d`, note: undefined };
  const said = exact
    ? `${tool} counts rolling windows: "${asked.phrase}" is taken as the last ${days} days.`
    : `${tool} has no window for ${asked.phrase} (it has ${lengths.map((l) => `${l}d`).join(', ')}); this answers the last ${days} days.`;
  return { value: `${days}d`, note: said };
}

/** A calendar period (leaderboards): the one asked for, else the calendar period nearest in length. */
export function calendarPeriod(tool: string, asked: RequestedPeriod): PeriodChoice {
  if (asked.calendar) return { value: asked.calendar, note: undefined };
  const days = asked.days ?? Number.POSITIVE_INFINITY;
  const [value, name]: [CalendarPeriod, string] =
    days <= 1
      ? ['daily', 'today']
      : days <= 7
        ? ['weekly', 'this calendar week']
        : days <= 31
          ? ['monthly', 'this calendar month']
          : ['all_time', 'all time'];
  return {
    value,
    note: `${tool} counts calendar periods, not ${asked.phrase}; this answers ${name}.`,
  };
}

/** A tool without a period answers for all time: said unless all time was asked for. */
export function forAllTime(tool: string, asked: RequestedPeriod): PeriodChoice {
  return {
    value: undefined,
    note: asked.days === null ? undefined : `${tool} has no period; this answers for all time, not ${asked.phrase}.`,
  };
}
