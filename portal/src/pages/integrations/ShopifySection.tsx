import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../../api.ts';
import { fieldErrors } from '../../errors/describe.ts';
import { ErrorNote } from '../../errors/ErrorNote.tsx';
import { shopifyQuery } from '../../queries/integrations.ts';
import { useBrand } from '../../session.ts';
import { TableWrap } from '../../TableWrap.tsx';

const when = (iso: string) => new Date(iso).toLocaleString();

/**
 * Orders from a Shopify shop (docs/shop-program.md, "Shopify"): the webhook address to paste into Shopify, the
 * connected shop, a form (admins and owners) to connect one with its webhook secret, and the last deliveries
 * with what pts did with each.
 */
export function ShopifySection({ editable }: { editable: boolean }) {
  const { brandId } = useBrand();
  const queryClient = useQueryClient();
  const shopify = useQuery(shopifyQuery(brandId));
  const [shopDomain, setShopDomain] = useState('');
  const [secret, setSecret] = useState('');
  const [valueSource, setValueSource] = useState<'subtotal' | 'total'>('subtotal');
  const [customers, setCustomers] = useState(false);
  const connect = useMutation({
    mutationFn: () => api('PUT', `/brands/${brandId}/shopify`, { shopDomain, secret, valueSource, customers }),
    onSuccess: async () => {
      setSecret('');
      await queryClient.invalidateQueries({ queryKey: shopifyQuery(brandId).queryKey });
    },
  });
  const disconnect = useMutation({
    mutationFn: () => api('DELETE', `/brands/${brandId}/shopify`),
    onSuccess: async () => {
      connect.reset();
      await queryClient.invalidateQueries({ queryKey: shopifyQuery(brandId).queryKey });
    },
  });
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    connect.mutate();
  };
  const errors = connect.isError ? fieldErrors(connect.error) : {};

  return (
    <section aria-labelledby="shopify-heading" className="panel">
      <h2 id="shopify-heading">Shopify</h2>
      {shopify.isPending ? <p className="loading">Loading the Shopify connection…</p> : null}
      {shopify.isError ? <ErrorNote error={shopify.error} onRetry={() => void shopify.refetch()} /> : null}
      {shopify.data ? (
        <>
          <p>
            {shopify.data.connection
              ? `Connected: ${shopify.data.connection.shopDomain} (the order's ${shopify.data.connection.valueSource} is the purchase value).`
              : 'No shop connected yet.'}{' '}
            In Shopify, Settings → Notifications → Webhooks, create a JSON webhook for{' '}
            {shopify.data.connection ? shopify.data.connection.topics.join(' and ') : 'orders/paid'} at this address:
          </p>
          <p>
            <code data-testid="shopify-webhook-url">{shopify.data.webhookUrl}</code>
          </p>
        </>
      ) : null}
      {editable ? (
        <form onSubmit={onSubmit} aria-label="Connect a Shopify shop">
          <label>
            Shop domain
            <input
              name="shopDomain"
              placeholder="my-shop.myshopify.com"
              value={shopDomain}
              onChange={(e) => setShopDomain(e.target.value)}
              aria-invalid={errors.shopDomain ? true : undefined}
              required
            />
          </label>
          {errors.shopDomain ? <p role="alert">{errors.shopDomain}</p> : null}
          <label>
            Webhook secret
            <input
              name="secret"
              type="password"
              autoComplete="off"
              value={secret}
              onChange={(e) => setSecret(e.target.value)}
              aria-invalid={errors.secret ? true : undefined}
              required
            />
          </label>
          {errors.secret ? <p role="alert">{errors.secret}</p> : null}
          <label>
            Purchase value
            <select value={valueSource} onChange={(e) => setValueSource(e.target.value as 'subtotal' | 'total')}>
              <option value="subtotal">Subtotal (before shipping and taxes)</option>
              <option value="total">Total</option>
            </select>
          </label>
          <label>
            <input type="checkbox" checked={customers} onChange={(e) => setCustomers(e.target.checked)} /> New customers
            earn the account_creation rule
          </label>
          <button type="submit" disabled={connect.isPending}>
            Connect shop
          </button>
          {connect.isError && Object.keys(errors).length === 0 ? <ErrorNote error={connect.error} /> : null}
          {connect.isSuccess ? <p role="status">Shop connected.</p> : null}
        </form>
      ) : null}
      {editable && shopify.data?.connection ? (
        <p>
          <button
            type="button"
            className="secondary"
            disabled={disconnect.isPending}
            onClick={() => {
              const shop = shopify.data?.connection?.shopDomain ?? 'the shop';
              if (window.confirm(`Disconnect ${shop}? Its orders stop earning pts; past deliveries stay listed.`)) {
                disconnect.mutate();
              }
            }}
          >
            Disconnect shop
          </button>
        </p>
      ) : null}
      {disconnect.isError ? <ErrorNote error={disconnect.error} /> : null}
      {disconnect.isSuccess && !shopify.data?.connection ? <p role="status">Shop disconnected.</p> : null}
      {shopify.data && shopify.data.deliveries.length > 0 ? (
        <TableWrap label="Last Shopify deliveries">
          <table>
            <caption>Last deliveries</caption>
            <thead>
              <tr>
                <th scope="col">Received</th>
                <th scope="col">Topic</th>
                <th scope="col">Result</th>
                <th scope="col">pts</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {shopify.data.deliveries.map((delivery) => (
                <tr key={delivery.id}>
                  <td>{when(delivery.receivedAt)}</td>
                  <th scope="row">{delivery.topic}</th>
                  <td>{delivery.result}</td>
                  <td>{delivery.rewardAmount ?? '—'}</td>
                  <td>{delivery.reason ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : shopify.data ? (
        <p>No deliveries yet.</p>
      ) : null}
    </section>
  );
}
