import { formatCents } from './payment-amounts.ts';

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Headers of every hosted page: no scripts at all, no framing (a Pay button must not be clickjacked). */
export const CHECKOUT_PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;padding:3rem 1rem;color:#1d2433}
main{max-width:26rem;margin:auto;background:#fff;border-radius:12px;padding:2rem;box-shadow:0 2px 12px #0001}
h1{font-size:1.25rem;margin:0 0 1rem}.amount{font-size:2rem;font-weight:700;margin:.5rem 0}
dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem;margin:1.25rem 0}dt{color:#667}dd{margin:0;word-break:break-all}
form{display:inline}button{font-size:1rem;border:0;border-radius:8px;padding:.7rem 1.4rem;cursor:pointer;margin-right:.5rem}
.pay{background:#2457f5;color:#fff}.cancel{background:#e6e8ee;color:#1d2433}.note{color:#667;font-size:.85rem;margin-top:1.5rem}`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

export interface CheckoutPageView {
  sessionId: string;
  brandName: string;
  brandId: string;
  amountCents: bigint;
  currency: string;
  ptsAmount: string;
  customerEmail: string;
  status: 'open' | 'complete' | 'expired';
  formToken: string;
  successUrl: string;
  cancelUrl: string;
}

/** The local provider's hosted checkout page. Everything shown is escaped; forms carry the session token. */
export function renderCheckoutPage(view: CheckoutPageView): string {
  const base = `/pts-api/checkout/${encodeURIComponent(view.sessionId)}`;
  const amount = `${formatCents(view.amountCents)} ${view.currency.toUpperCase()}`;
  const details = `<dl>
<dt>Brand</dt><dd>${escapeHtml(view.brandName)}</dd>
<dt>Wallet</dt><dd>${escapeHtml(view.brandId)}</dd>
<dt>Tokens</dt><dd>${escapeHtml(view.ptsAmount)}</dd>
<dt>Email</dt><dd>${escapeHtml(view.customerEmail)}</dd>
<dt>Session</dt><dd>${escapeHtml(view.sessionId)}</dd>
</dl>`;
  let actions: string;
  if (view.status === 'open') {
    const token = `<input type="hidden" name="token" value="${escapeHtml(view.formToken)}">`;
    actions = `<form method="post" action="${escapeHtml(`${base}/pay`)}">${token}<button class="pay" type="submit">Pay ${escapeHtml(amount)}</button></form>
<form method="post" action="${escapeHtml(`${base}/cancel`)}">${token}<button class="cancel" type="submit">Cancel</button></form>`;
  } else if (view.status === 'complete') {
    actions = `<p>This checkout is already paid. <a href="${escapeHtml(view.successUrl)}">Continue</a></p>`;
  } else {
    actions = `<p>This checkout was canceled. <a href="${escapeHtml(view.cancelUrl)}">Back</a></p>`;
  }
  return layout(
    `Buy reward tokens — ${view.brandName}`,
    `<h1>Buy reward tokens</h1>
<div class="amount">${escapeHtml(amount)}</div>
${details}
${actions}
<p class="note">Local test checkout served by pts core-api: no card is charged. Configure Stripe for real payments.</p>`,
  );
}

/** A hosted page that explains why the action did not happen. */
export function renderCheckoutMessage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`);
}

/** Replaces Stripe's `{CHECKOUT_SESSION_ID}` template the way Stripe does on its redirect. */
export function fillSessionId(url: string, sessionId: string): string {
  return url.split('{CHECKOUT_SESSION_ID}').join(encodeURIComponent(sessionId));
}
