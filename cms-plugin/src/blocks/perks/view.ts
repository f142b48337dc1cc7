import {
  announceChange,
  callPts,
  currentSession,
  el,
  fill,
  message,
  mountAll,
  type RestError,
} from '../shared/view-kit';

interface Perk {
  id: string;
  name: string;
  description: string;
  category: string;
  cost: number;
  remainingSupply: number | null;
}
interface RedeemResponse {
  confirmationCode: string | null;
  perk: { id: string; name: string; cost: number; category: string } | null;
}

/** The perk store: the brand's perks, each with a redeem button for a logged-in visitor. */
async function mountPerks(root: HTMLElement): Promise<void> {
  const title = el('h3', {}, 'Perk store');
  const [loggedIn, perks] = await Promise.all([
    currentSession(),
    callPts<{ perks: Perk[] }>('/perks').then(
      (answer) => answer.perks,
      (error: RestError) => error,
    ),
  ]);
  if (!Array.isArray(perks)) {
    fill(root, title, message(perks.message, 'error'));
    return;
  }
  let note: HTMLElement | null = loggedIn ? null : message('Log in to redeem perks with your points.');
  let busy = false;

  const render = () => {
    const items = perks.map((perk) => {
      const redeem = loggedIn
        ? el(
            'button',
            { type: 'button', class: 'pts-redeem-button', 'data-perk-id': perk.id, disabled: busy },
            `Redeem for ${perk.cost} pts`,
          )
        : null;
      redeem?.addEventListener('click', () => void redeemPerk(perk));
      return el(
        'div',
        { class: 'pts-perk' },
        el('strong', {}, perk.name),
        ` · ${perk.cost} pts`,
        perk.remainingSupply === null ? '' : ` · ${perk.remainingSupply} left`,
        perk.description ? el('p', {}, perk.description) : null,
        redeem,
      );
    });
    fill(root, title, ...(items.length ? items : [message('No perks are available right now.')]), note);
  };

  const redeemPerk = async (perk: Perk) => {
    busy = true;
    note = message(`Redeeming ${perk.name}…`);
    render();
    try {
      const result = await callPts<RedeemResponse>('/redeem', { method: 'POST', data: { perkId: perk.id } });
      note = el(
        'p',
        { class: 'pts-message pts-ok', role: 'status' },
        `Redeemed ${result.perk?.name ?? perk.name}. Your confirmation code: `,
        el('code', { class: 'pts-confirmation-code' }, result.confirmationCode ?? ''),
      );
      announceChange();
    } catch (error) {
      note = message((error as RestError).message, 'error');
    }
    busy = false;
    render();
  };

  render();
}

mountAll('perks', mountPerks);
