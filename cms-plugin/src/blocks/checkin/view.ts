import {
  announceChange,
  callPts,
  currentSession,
  days,
  el,
  fill,
  loginPrompt,
  message,
  mountAll,
  type RestError,
} from '../shared/view-kit';

interface Milestone {
  days: number;
  bonus: number;
}
interface Streak {
  currentStreak: number;
  multiplier: number;
  nextMilestone: Milestone | null;
  unclaimedMilestones: Milestone[];
}
interface StatusResponse {
  streak: Streak;
  checkedInToday: boolean;
}
interface CheckinResponse {
  streak: Streak;
  reward: number;
  alreadyClaimed: boolean;
}
interface ClaimResponse {
  bonusPts: number;
  milestone: number;
}

/** The check-in widget: streak, multiplier, next milestone, claim buttons and the daily check-in button. */
async function mountCheckin(root: HTMLElement): Promise<void> {
  if (!(await currentSession())) {
    fill(root, el('h3', {}, 'Daily check-in'), loginPrompt('check in and build your streak'));
    return;
  }
  let streak: Streak;
  let checkedIn: boolean;
  try {
    const status = await callPts<StatusResponse>('/streak');
    streak = status.streak;
    checkedIn = status.checkedInToday;
  } catch (error) {
    fill(root, el('h3', {}, 'Daily check-in'), message((error as RestError).message, 'error'));
    return;
  }
  let note: HTMLElement | null = null;

  const render = () => {
    const button = el(
      'button',
      { type: 'button', class: 'pts-checkin-button', disabled: checkedIn },
      checkedIn ? 'Checked in today' : 'Check in',
    );
    button.addEventListener('click', () => void checkIn());
    const claims = streak.unclaimedMilestones.map((milestone) => {
      const claim = el(
        'button',
        { type: 'button', class: 'pts-claim-button' },
        `Claim ${milestone.days}-day bonus (+${milestone.bonus} pts)`,
      );
      claim.addEventListener('click', () => void claimMilestone(milestone.days));
      return claim;
    });
    fill(
      root,
      el('h3', {}, 'Daily check-in'),
      el(
        'p',
        { class: 'pts-streak' },
        'Streak: ',
        el('strong', {}, days(streak.currentStreak)),
        ` · multiplier ×${streak.multiplier}`,
      ),
      streak.nextMilestone
        ? el(
            'p',
            { class: 'pts-next' },
            `Next milestone: ${days(streak.nextMilestone.days)} (+${streak.nextMilestone.bonus} pts)`,
          )
        : null,
      button,
      ...claims,
      note,
    );
  };

  const checkIn = async () => {
    try {
      const result = await callPts<CheckinResponse>('/checkin', { method: 'POST' });
      streak = result.streak;
      checkedIn = true;
      note = result.alreadyClaimed
        ? message('Already checked in today: come back tomorrow.', 'info')
        : message(`Checked in! +${result.reward} pts. Your streak: ${days(streak.currentStreak)}.`, 'ok');
      if (!result.alreadyClaimed) announceChange();
    } catch (error) {
      note = message((error as RestError).message, 'error');
    }
    render();
  };

  const claimMilestone = async (milestoneDays: number) => {
    try {
      const result = await callPts<ClaimResponse>('/claim-milestone', { method: 'POST', data: { milestoneDays } });
      streak = {
        ...streak,
        unclaimedMilestones: streak.unclaimedMilestones.filter((m) => m.days !== result.milestone),
      };
      note = message(`Milestone claimed: +${result.bonusPts} pts for ${days(result.milestone)}.`, 'ok');
      announceChange();
    } catch (error) {
      note = message((error as RestError).message, 'error');
    }
    render();
  };

  render();
}

mountAll('checkin', mountCheckin);
