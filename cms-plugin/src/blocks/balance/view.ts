import { callPts, currentSession, el, fill, loginPrompt, message, mountAll, type RestError } from '../shared/view-kit';

interface BalanceResponse {
  balance: number;
  pending: number;
}

/** `GET /pts/v1/tier`: null while the brand has no tiers. */
interface TierResponse {
  tier: {
    name: string;
    multiplier: number;
    basis: 'earned' | 'spent';
    current: string;
    next: { name: string; threshold: string; remaining: string } | null;
  } | null;
}

/** "Silver tier · 550 pts to Gold" (spent: "550.00 more in purchases to Gold"); "Gold tier · the top tier". */
function tierLine(tier: NonNullable<TierResponse['tier']>): string {
  if (!tier.next) return `${tier.name} tier · the top tier`;
  const distance = tier.basis === 'earned' ? `${tier.next.remaining} pts` : `${tier.next.remaining} more in purchases`;
  return `${tier.name} tier · ${distance} to ${tier.next.name}`;
}

/** The balance widget: spendable points now, rewards still confirming, and the member's tier when the brand has tiers. */
async function mountBalance(root: HTMLElement): Promise<void> {
  const title = el('h3', {}, 'Your points');
  if (!(await currentSession())) {
    fill(root, title, loginPrompt('see your points'));
    return;
  }
  const load = async () => {
    // The tier is extra: when it cannot be read the balance still shows, without a tier line.
    const tier = callPts<TierResponse>('/tier').then(
      (answer) => answer.tier,
      () => null,
    );
    try {
      const { balance, pending } = await callPts<BalanceResponse>('/balance');
      const standing = await tier;
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
        standing && el('p', { class: 'pts-tier' }, tierLine(standing)),
      );
    } catch (error) {
      fill(root, title, message((error as RestError).message, 'error'));
    }
  };
  document.addEventListener('pts:changed', () => void load());
  await load();
}

mountAll('balance', mountBalance);
