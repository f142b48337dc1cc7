import type { Clock } from '@pts/shared';
import { type MemberAnswer, windowKeptUntil } from '../../modules/ledger/member-answers.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';
import { keptMemberAnswer } from '../tools/actions/member-views.ts';

/** What the windowed member tools' descriptions say of it. */
export const WINDOWED_ANSWER_NOTE =
  ' `basis.to` is the moment the answer was computed: a repeated question may be answered as of up to ' +
  'PTS_AGENT_ANSWER_MAX_AGE_SECONDS (default 300 s) earlier, but never across a write to the member or to the ' +
  'perks shown (any such write is in the next answer).';

/**
 * A member tool's answer over a sliding window (the last 30 days up to the moment it is computed, which the
 * answer states as `basis.to`), kept by `d.memberAnswers` like the other member answers (docs/decisions.md,
 * "Windowed member answers"): dropped at once by a write to anything in `tokens`, at `validUntil` when the
 * answer changes by time alone (a cooldown ending, the UTC day turning, a perk window), and in any case
 * PTS_AGENT_ANSWER_MAX_AGE_SECONDS after `basis.to` — the bound the population figures it holds already have
 * (0 keeps none). `compute` gets the moment it answers at. Errors are never kept. `key` names the question
 * fully (tool, the key's brands, member, arguments); the caller checks the key's authority before this.
 */
export function keptWindowedAnswer<T>(
  d: Pick<AgentToolDeps, 'memberAnswers' | 'settings'>,
  context: { clock: Clock },
  key: string[],
  compute: (now: Date) => Promise<MemberAnswer<T>>,
): Promise<T> {
  return keptMemberAnswer<T>(d, key, async () => {
    const now = context.clock.now();
    const result = await compute(now);
    const bound = windowKeptUntil(now, d.settings.answerMaxAgeSeconds);
    return {
      ...result,
      value: { data: result.value },
      validUntil: result.validUntil && result.validUntil < bound ? result.validUntil : bound,
    };
  });
}
