import { LEADERBOARD_PERIODS, leaderboardEntrySchema, nextPeriodStart } from '@pts/shared';
import { z } from 'zod';
import { ANY_LEADERBOARD_TOKEN, leaderboardToken } from '../../../modules/ledger/member-answers.ts';
import { requireKnownBrand } from '../../actions/brand-authority.ts';
import { type AgentTool, defineAgentTool } from '../../agent-tool.ts';
import {
  AGENT_LEADERBOARD_MAX,
  AGENT_LEADERBOARD_METRICS,
  boundedInt,
  brandParams,
  lowerEnum,
} from './discovery-schemas.ts';
import type { BrandToolDeps } from './discovery-tool-deps.ts';

const resultSchema = z.object({
  brandId: z.string(),
  metric: z.enum(AGENT_LEADERBOARD_METRICS),
  period: z.enum(LEADERBOARD_PERIODS),
  periodStart: z.string().nullable(),
  total: z.number().int(),
  leaderboard: z.array(leaderboardEntrySchema),
  note: z.string().optional(),
});

const leaderboardQuery = z.object({
  metric: lowerEnum(AGENT_LEADERBOARD_METRICS).default('pts_earned'),
  period: lowerEnum(LEADERBOARD_PERIODS).default('all_time'),
  limit: boundedInt('limit', 1, AGENT_LEADERBOARD_MAX, 10),
});

/** `get_leaderboard`: A brand's leaderboard by pts earned, streak or activity. */
export function getLeaderboardTool(d: BrandToolDeps): AgentTool {
  return defineAgentTool({
    name: 'get_leaderboard',
    method: 'get',
    path: '/brands/:brandId/leaderboard',
    summary: "A brand's leaderboard by pts earned, streak or activity",
    description:
      'Top members of a brand. `metric`: pts_earned (default; pts whose mint is confirmed on chain), streak ' +
      '(current daily streak in days) or activity (rewarded actions). `period`: daily, weekly, monthly (UTC ' +
      'calendar day, ISO week from Monday, calendar month) or all_time (default); `periodStart` is the start ' +
      'of the current period. `limit` 1–100 (default 10). Ties share a rank. Identifiers are masked ' +
      '(public answer). An empty board means nobody scored in the period.',
    access: 'public',
    request: { params: brandParams, query: leaderboardQuery },
    result: resultSchema,
    example: (fixture) => ({ params: { brandId: fixture.brandId }, query: { metric: 'pts_earned', limit: 5 } }),
    async handle({ params, query }, context) {
      await requireKnownBrand(d, params.brandId);
      const now = context.clock.now();
      // Kept until the database announces a write to the brand's boards (or to usernames), and at most until
      // the period turns over; the streak board moves with time alone (lapses), so it is read every time.
      const key = ['get_leaderboard', params.brandId, query.metric, query.period, query.limit].join('\n');
      return d.memberAnswers.answer(key, async () => {
        const board = await d.discoveryReads.readLeaderboard(
          {
            brandId: params.brandId,
            metric: query.metric,
            period: query.period,
            limit: query.limit,
            revealIdentifiers: false,
            logger: context.logger,
          },
          now,
        );
        return {
          value: {
            brandId: params.brandId,
            metric: query.metric,
            period: query.period,
            periodStart: board.periodStart,
            total: board.total,
            leaderboard: board.leaderboard,
            ...(board.leaderboard.length === 0
              ? { note: `nobody scored ${query.metric} in this ${query.period} period` }
              : {}),
          },
          tokens: [leaderboardToken(params.brandId), ANY_LEADERBOARD_TOKEN],
          validUntil: nextPeriodStart(query.period, now),
          keep: query.metric !== 'streak',
        };
      });
    },
  });
}
