import { callPts, currentSession, el, fill, loginPrompt, message, mountAll, type RestError } from '../shared/view-kit';

interface BalanceResponse {
  balance: number;
  pending: number;
}

/** The balance widget: spendable points now, and rewards still confirming. */
async function mountBalance(root: HTMLElement): Promise<void> {
  const title = el('h3', {}, 'Your points');
  if (!(await currentSession())) {
    fill(root, title, loginPrompt('see your points'));
    return;
  }
  const load = async () => {
    try {
      const { balance, pending } = await callPts<BalanceResponse>('/balance');
      fill(
        root,
        title,
        el(
          'p',
          { class: 'pts-balance-amount' },
          el('strong', {}, String(balance)),
          ' pts to spend',
          pending > 0 ? ` (+${pending} confirming)` : '',
        ),
      );
    } catch (error) {
      fill(root, title, message((error as RestError).message, 'error'));
    }
  };
  document.addEventListener('pts:changed', () => void load());
  await load();
}

mountAll('balance', mountBalance);
