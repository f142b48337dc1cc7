import { callPts, el, fill, message, mountAll, type RestError } from '../shared/view-kit';

interface Row {
  userIdentifier: string;
  username: string;
  value: number;
  rank: number;
}
interface LeaderboardResponse {
  leaderboard: Row[];
  metric: string;
  period: string;
  total: number;
}

const METRIC_LABELS: Record<string, string> = {
  pts_earned: 'Points earned',
  activity: 'Actions',
  streak: 'Streak (days)',
};
const PERIOD_LABELS: Record<string, string> = { week: 'this week', month: 'this month', all: 'all time' };

/** The leaderboard widget (public: the same for every visitor). */
async function mountLeaderboard(root: HTMLElement): Promise<void> {
  const metric = root.dataset.metric ?? 'pts_earned';
  const period = root.dataset.period ?? 'week';
  const limit = root.dataset.limit ?? '10';
  const title = el('h3', {}, `Leaderboard: ${METRIC_LABELS[metric] ?? metric}, ${PERIOD_LABELS[period] ?? period}`);
  const load = async () => {
    try {
      const query = new URLSearchParams({ metric, period, limit });
      const board = await callPts<LeaderboardResponse>(`/leaderboard?${query}`);
      if (board.leaderboard.length === 0) {
        fill(root, title, message('No one is on the board yet: be the first!'));
        return;
      }
      fill(
        root,
        title,
        el(
          'table',
          {},
          el(
            'thead',
            {},
            el('tr', {}, el('th', {}, '#'), el('th', {}, 'Member'), el('th', {}, METRIC_LABELS[metric] ?? metric)),
          ),
          el(
            'tbody',
            {},
            ...board.leaderboard.map((row) =>
              el('tr', {}, el('td', {}, String(row.rank)), el('td', {}, row.username), el('td', {}, String(row.value))),
            ),
          ),
        ),
      );
    } catch (error) {
      fill(root, title, message((error as RestError).message, 'error'));
    }
  };
  document.addEventListener('pts:changed', () => void load());
  await load();
}

mountAll('leaderboard', mountLeaderboard);
