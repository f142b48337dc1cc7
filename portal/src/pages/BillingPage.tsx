import { createCheckoutResponseSchema, paymentMintResponseSchema } from '@pts/shared/schemas/payments';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';
import { request } from '../api.ts';
import { describeError, fieldErrors } from '../errors/describe.ts';
import { ErrorNote } from '../errors/ErrorNote.tsx';
import { billingQuery } from '../queries/integrations.ts';
import { canEdit, useBrand } from '../session.ts';
import { TableWrap } from '../TableWrap.tsx';

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

export function BillingPage() {
  const { brandId, membership } = useBrand();
  const queryClient = useQueryClient();
  const editable = canEdit(membership);
  const [params] = useSearchParams();
  const returnedSession = params.get('session_id');
  const [dollars, setDollars] = useState('10');
  const billing = useQuery(billingQuery(brandId));
  const buy = useMutation({
    mutationFn: (amount: number) =>
      request(createCheckoutResponseSchema, 'POST', `/brands/${brandId}/checkout`, { amount }),
    onSuccess: (created) => window.location.assign(created.checkoutUrl),
  });
  // Back from a paid checkout: make sure the tokens are minted (idempotent; the webhook may have done it).
  const confirm = useMutation({
    mutationFn: (sessionId: string) =>
      request(
        paymentMintResponseSchema,
        'POST',
        `/brands/${brandId}/purchases/${encodeURIComponent(sessionId)}/confirm`,
      ),
    onSettled: () => queryClient.invalidateQueries({ queryKey: billingQuery(brandId).queryKey }),
  });
  const { mutate: confirmPurchase } = confirm;
  useEffect(() => {
    if (returnedSession && editable) confirmPurchase(returnedSession);
  }, [returnedSession, editable, confirmPurchase]);
  const errors = fieldErrors(buy.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    buy.mutate(Math.round(Number(dollars) * 100));
  };

  if (billing.isPending) return <p className="loading">Loading billing…</p>;
  if (billing.isError) return <ErrorNote error={billing.error} onRetry={() => void billing.refetch()} />;
  const { purchases, totals, gas, checkout } = billing.data;
  const tokens = Number.isFinite(Number(dollars)) ? Math.round(Number(dollars) * checkout.tokensPerUsd) : 0;
  return (
    <section>
      <h1>Billing</h1>
      {params.get('checkout') === 'canceled' ? (
        <p role="status">The checkout was canceled; nothing was charged.</p>
      ) : null}
      {returnedSession ? (
        <p role="status" data-testid="checkout-return">
          {confirm.isPending
            ? 'Payment received: minting the tokens…'
            : confirm.isError
              ? `Payment not settled yet: ${describeError(confirm.error).message}`
              : 'Payment received: the tokens are on their way to your brand wallet.'}
        </p>
      ) : null}
      <section aria-labelledby="buy-heading" className="panel">
        <h2 id="buy-heading">Buy tokens</h2>
        <p>
          Tokens go to your brand's wallet and pay its members' rewards: 1 USD buys {checkout.tokensPerUsd} tokens, from{' '}
          {(checkout.minCents / 100).toFixed(2)} to {(checkout.maxCents / 100).toLocaleString()} USD at a time.
        </p>
        {editable ? (
          <form onSubmit={submit} className="row" aria-label="Buy tokens">
            <label>
              Amount (USD)
              <input
                name="amount"
                type="number"
                min={checkout.minCents / 100}
                max={checkout.maxCents / 100}
                step={0.01}
                required
                value={dollars}
                onChange={(e) => setDollars(e.target.value)}
                {...(errors.amount ? { 'aria-invalid': true, 'aria-describedby': 'amount-error' } : {})}
              />
              {errors.amount ? (
                <span className="error" id="amount-error">
                  {errors.amount}
                </span>
              ) : null}
            </label>
            <button type="submit" disabled={buy.isPending}>
              Buy {tokens.toLocaleString()} tokens
            </button>
          </form>
        ) : (
          <p className="note">Admins and owners buy tokens.</p>
        )}
        {buy.isError && !errors.amount ? (
          <p role="alert" className="error">
            {describeError(buy.error).message}
          </p>
        ) : null}
      </section>
      <section aria-labelledby="purchases-heading" className="panel">
        <h2 id="purchases-heading">Purchases</h2>
        <p data-testid="purchase-totals">
          {totals.fulfilled} paid of {totals.purchases}: {totals.usdAmount} USD for{' '}
          {totals.ptsPurchased.toLocaleString()} tokens ({totals.ptsConfirmed.toLocaleString()} confirmed on chain).
        </p>
        {purchases.length === 0 ? (
          <p>No purchase yet.</p>
        ) : (
          <TableWrap label="Token purchases">
            <table>
              <caption className="visually-hidden">Token purchases</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">USD</th>
                  <th scope="col">Tokens</th>
                  <th scope="col">Status</th>
                  <th scope="col">Mint</th>
                  <th scope="col">By</th>
                </tr>
              </thead>
              <tbody>
                {purchases.map((purchase) => (
                  <tr key={purchase.sessionId} data-session-id={purchase.sessionId}>
                    <th scope="row">{when(purchase.createdAt)}</th>
                    <td>{purchase.usdAmount}</td>
                    <td>{purchase.ptsAmount.toLocaleString()}</td>
                    <td>{purchase.status}</td>
                    <td>{purchase.mintStatus ?? '—'}</td>
                    <td>{purchase.userEmail ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </section>
      <section aria-labelledby="gas-heading" className="panel">
        <h2 id="gas-heading">Relayer gas</h2>
        <p>Gas the relayer paid for your members' gasless transactions, charged to the brand.</p>
        <dl className="facts" data-testid="gas">
          <dt>Transactions</dt>
          <dd>{gas.transactions}</dd>
          <dt>Gas used</dt>
          <dd>{gas.gasUsed}</dd>
          <dt>Cost</dt>
          <dd>{gas.costEth} ETH</dd>
        </dl>
      </section>
    </section>
  );
}
