import { DEFAULT_PORTAL_KEY_GRACE_MINUTES } from '@pts/shared/schemas/brands';
import type { PortalAgentKeys, PortalIntegrations, PortalWebhook } from '@pts/shared/schemas/portal-integrations';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useState } from 'react';
import { api, request } from '../api.ts';
import { describeError, fieldErrors } from '../errors/describe.ts';
import { ErrorNote } from '../errors/ErrorNote.tsx';
import {
  agentKeyCreatedAnswerSchema,
  agentKeysQuery,
  domainCheckAnswerSchema,
  integrationsQuery,
  rotatedKeysAnswerSchema,
  webhookQuery,
  webhookSavedAnswerSchema,
  webhookTestAnswerSchema,
} from '../queries/integrations.ts';
import { canEdit, isOwner, useBrand } from '../session.ts';
import { ListAndForm } from '../ui/ListAndForm.tsx';
import { ChatGroupsSection } from './integrations/ChatGroupsSection.tsx';
import { ShopifySection } from './integrations/ShopifySection.tsx';
import { InputField, useFieldErrors } from './program/fields.tsx';

/** A button that copies `text` and says so (for screen readers too). */
export function CopyButton(props: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <span className="copy">
      <button type="button" className="secondary" onClick={copy}>
        {props.label}
      </button>
      <span role="status" className="note">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text and copy it' : ''}
      </span>
    </span>
  );
}

/** A secret the server showed this once: the person copies it now or rotates again later. */
function ShownOnce(props: { title: string; children: ReactNode }) {
  return (
    <div className="shown-once" role="status">
      <h3>{props.title}</h3>
      <p>
        <strong>Copy it now: it is shown this once.</strong> pts keeps no readable copy to show again.
      </p>
      {props.children}
    </div>
  );
}

function Secret(props: { label: string; copyLabel: string; value: string; testId: string }) {
  return (
    <p className="secret">
      {props.label}:{' '}
      <code className="link" data-testid={props.testId}>
        {props.value}
      </code>{' '}
      <CopyButton text={props.value} label={props.copyLabel} />
    </p>
  );
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

export function IntegrationsPage() {
  const { brandId, membership } = useBrand();
  const overview = useQuery(integrationsQuery(brandId));

  if (overview.isPending) return <p className="loading">Loading the integrations…</p>;
  if (overview.isError) return <ErrorNote error={overview.error} onRetry={() => void overview.refetch()} />;
  const data = overview.data;
  return (
    <section className="integrations">
      <h1>Integrations</h1>
      <p>How your sites, bots and back-ends connect to pts. Changes apply at once and are in the audit log.</p>
      {canEdit(membership) ? null : (
        <p className="note">
          Your role ({membership?.role ?? 'none'}) reads the integrations; admins and owners change them.
        </p>
      )}
      <SecurityKey data={data} owner={isOwner(membership)} />
      <SdkSnippet data={data} />
      <Domains data={data} editable={canEdit(membership)} />
      <Webhooks editable={canEdit(membership)} />
      <WordPress data={data} />
      <ShopifySection editable={canEdit(membership)} />
      <ChatGroupsSection groups={data.chatGroups} editable={canEdit(membership)} />
      <XHandle data={data} editable={canEdit(membership)} />
      <AgentKeys editable={canEdit(membership)} />
    </section>
  );
}

function SecurityKey({ data, owner }: { data: PortalIntegrations; owner: boolean }) {
  const keys = data.keys;
  return (
    <section aria-labelledby="key-heading" className="panel">
      <h2 id="key-heading" tabIndex={-1}>
        Security key
      </h2>
      <p>
        Signs your back-end's events and the WordPress plugin's calls. The API key goes in your domains' TXT records.
      </p>
      <dl className="facts">
        <dt>State</dt>
        <dd data-testid="key-state">{keys.active ? 'active' : 'revoked: rotate to get working keys'}</dd>
        <dt>Issued</dt>
        <dd>{when(keys.issuedAt)}</dd>
        <dt>The previous key verifies until</dt>
        <dd data-testid="previous-key">
          {keys.previousKeyValidUntil ? when(keys.previousKeyValidUntil) : 'no longer'}
        </dd>
      </dl>
      {owner ? (
        <>
          <RotateKey />
          {keys.previousKeyValidUntil ? <EndOldKey validUntil={keys.previousKeyValidUntil} /> : null}
        </>
      ) : (
        <p className="note">Only owners rotate the key.</p>
      )}
    </section>
  );
}

/** What signs with the security key, so what stops working once the old key is refused. */
function WhatBreaks() {
  return (
    <ul>
      <li>your back end, which signs its events with the security key;</li>
      <li>the WordPress plugin, whose settings hold the security key;</li>
      <li>the Discord and Telegram bots set up with the key, and anything else signing with it.</li>
    </ul>
  );
}

/**
 * "Rotate key" asks first: it says what breaks once the old key is refused, and keeps the old key working for a
 * grace period (a day unless changed) so each integration can move to the new key.
 */
function RotateKey() {
  const { brandId } = useBrand();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const [grace, setGrace] = useState(String(DEFAULT_PORTAL_KEY_GRACE_MINUTES));
  const rotate = useMutation({
    mutationFn: () =>
      request(rotatedKeysAnswerSchema, 'POST', `/brands/${brandId}/keys/rotate`, {
        graceMinutes: Number(grace),
      }),
    onSuccess: () => {
      setConfirming(false);
      return queryClient.invalidateQueries({ queryKey: integrationsQuery(brandId).queryKey });
    },
  });
  const errors = fieldErrors(rotate.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    rotate.mutate();
  };
  const focusOnShow = (element: HTMLElement | null) => element?.focus();
  return (
    <>
      {confirming ? (
        <form onSubmit={submit} className="stack narrow confirm" aria-label="Rotate the security key">
          <h3 tabIndex={-1} ref={focusOnShow}>
            Rotate the keys?
          </h3>
          <p>
            You get a new security key and a new API key. The API key changes at once. The old security key keeps
            working for the grace period below; after it, these are refused until they use the new key:
          </p>
          <WhatBreaks />
          <label>
            Grace period in minutes (1440 is a day; 0 refuses the old key at once)
            <input
              name="graceMinutes"
              type="number"
              min={0}
              max={10080}
              step={1}
              required
              value={grace}
              onChange={(e) => setGrace(e.target.value)}
              {...(errors.graceMinutes ? { 'aria-invalid': true, 'aria-describedby': 'graceMinutes-error' } : {})}
            />
            {errors.graceMinutes ? (
              <span className="error" id="graceMinutes-error">
                {errors.graceMinutes}
              </span>
            ) : null}
          </label>
          {rotate.isError && !errors.graceMinutes ? (
            <p role="alert" className="error">
              {describeError(rotate.error).message}
            </p>
          ) : null}
          <div className="row">
            <button type="submit" disabled={rotate.isPending}>
              Rotate now
            </button>
            <button type="button" className="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <button type="button" onClick={() => setConfirming(true)}>
          Rotate key
        </button>
      )}
      {rotate.isSuccess ? (
        <ShownOnce title="New keys">
          <Secret
            label="Security key"
            copyLabel="Copy the security key"
            value={rotate.data.keys.securityKey}
            testId="new-security-key"
          />
          <Secret label="API key" copyLabel="Copy the API key" value={rotate.data.keys.apiKey} testId="new-api-key" />
          <p>
            {rotate.data.keys.previousKeyValidUntil
              ? `The old security key keeps working until ${when(rotate.data.keys.previousKeyValidUntil)}. Once your back end, WordPress plugin and bots use the new one, end it below.`
              : 'The old security key is refused from now on.'}
          </p>
        </ShownOnce>
      ) : null}
    </>
  );
}

/** "End the old key now": its own action, confirmed, for when every integration runs on the new key (or it leaked). */
function EndOldKey({ validUntil }: { validUntil: string }) {
  const { brandId } = useBrand();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const end = useMutation({
    mutationFn: () => api('POST', `/brands/${brandId}/keys/end-previous`),
    onSuccess: async () => {
      setConfirming(false);
      await queryClient.invalidateQueries({ queryKey: integrationsQuery(brandId).queryKey });
      // This control is gone with the old key: focus goes back to the section, whose facts now say "no longer".
      document.getElementById('key-heading')?.focus();
    },
  });
  const focusOnShow = (element: HTMLElement | null) => element?.focus();
  return (
    <div className="stack narrow">
      {confirming ? (
        <section className="confirm" aria-labelledby="end-old-key-heading">
          <h3 id="end-old-key-heading" tabIndex={-1} ref={focusOnShow}>
            End the old key now?
          </h3>
          <p>
            It would keep working until {when(validUntil)}. From this moment on, anything still signing with it is
            refused:
          </p>
          <WhatBreaks />
          {end.isError ? (
            <p role="alert" className="error">
              {describeError(end.error).message}
            </p>
          ) : null}
          <div className="row">
            <button type="button" className="danger" disabled={end.isPending} onClick={() => end.mutate()}>
              End the old key
            </button>
            <button type="button" className="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </section>
      ) : (
        <button type="button" className="secondary" onClick={() => setConfirming(true)}>
          End the old key now
        </button>
      )}
    </div>
  );
}

function SdkSnippet({ data }: { data: PortalIntegrations }) {
  return (
    <section aria-labelledby="sdk-heading" className="panel">
      <h2 id="sdk-heading">Browser SDK</h2>
      <p>Put this tag on your site's pages: it detects the events your rules describe and sends them.</p>
      <pre className="snippet">
        <code data-testid="sdk-snippet">{data.sdk.snippet}</code>
      </pre>
      <CopyButton text={data.sdk.snippet} label="Copy snippet" />
    </section>
  );
}

function Domains({ data, editable }: { data: PortalIntegrations; editable: boolean }) {
  const { brandId } = useBrand();
  const queryClient = useQueryClient();
  const [domain, setDomain] = useState(data.domains.websiteDomain);
  const verify = useMutation({
    mutationFn: () =>
      request(
        domainCheckAnswerSchema,
        'POST',
        `/brands/${brandId}/domains/${encodeURIComponent(domain.trim())}/verify`,
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: integrationsQuery(brandId).queryKey }),
  });
  const remove = useMutation({
    mutationFn: (name: string) => api('DELETE', `/brands/${brandId}/domains/${encodeURIComponent(name)}`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: integrationsQuery(brandId).queryKey }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    verify.mutate();
  };
  return (
    <section aria-labelledby="domains-heading" className="panel">
      <h2 id="domains-heading">Domains</h2>
      <p>
        Pages on <strong>{data.domains.websiteDomain}</strong>, its subdomains and your verified domains may send
        events. To verify a domain, add a TXT record at <code>_pts.&lt;domain&gt;</code> (for example{' '}
        <code>{data.domains.txtHost}</code>) with the value <code className="link">{data.domains.txtValue}</code>.
      </p>
      {data.domains.verifiedDomains.length > 0 ? (
        <ul data-testid="verified-domains">
          {data.domains.verifiedDomains.map((name) => (
            <li key={name}>
              {name} (verified){' '}
              {editable ? (
                <button
                  type="button"
                  className="secondary"
                  aria-label={`Remove ${name}`}
                  disabled={remove.isPending}
                  onClick={() => {
                    if (window.confirm(`Remove ${name}? Its pages stop sending events until it is verified again.`)) {
                      remove.mutate(name);
                    }
                  }}
                >
                  Remove
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      ) : (
        <p>No verified domain yet.</p>
      )}
      {editable ? (
        <form onSubmit={submit} className="row" aria-label="Verify a domain">
          <label>
            Domain to verify
            <input required value={domain} onChange={(e) => setDomain(e.target.value)} />
          </label>
          <button type="submit" disabled={verify.isPending}>
            Verify domain
          </button>
        </form>
      ) : null}
      {remove.isError ? (
        <p role="alert" className="error">
          {describeError(remove.error).message}
        </p>
      ) : null}
      {remove.isSuccess ? <p role="status">{remove.variables} is no longer a verified domain.</p> : null}
      {verify.isError ? (
        <p role="alert" className="error">
          {describeError(verify.error).message}
        </p>
      ) : null}
      {verify.isSuccess ? (
        <p role="status">
          {verify.data.dnsConfigured
            ? `${verify.data.domain} is verified.`
            : `${verify.data.domain} is not verified yet (${verify.data.reason.replaceAll('_', ' ')}).`}
        </p>
      ) : null}
    </section>
  );
}

type WebhookDelivery = PortalWebhook['deliveries'][number];
type WebhookEndpoint = PortalWebhook['webhook'];
type AgentKey = PortalAgentKeys['agentKeys'][number];

function Webhooks({ editable }: { editable: boolean }) {
  const { brandId } = useBrand();
  const queryClient = useQueryClient();
  const webhook = useQuery(webhookQuery(brandId));
  const refresh = () => queryClient.invalidateQueries({ queryKey: webhookQuery(brandId).queryKey });
  const save = useMutation({
    mutationFn: (input: { url: string; rotateSecret: boolean }) =>
      request(webhookSavedAnswerSchema, 'PUT', `/brands/${brandId}/webhook`, input),
    onSuccess: refresh,
  });
  const test = useMutation({
    mutationFn: () => request(webhookTestAnswerSchema, 'POST', `/brands/${brandId}/webhook/test`),
    onSuccess: refresh,
  });
  const replay = useMutation({
    mutationFn: (id: string) => api('POST', `/brands/${brandId}/webhook/deliveries/${id}/replay`),
    onSuccess: refresh,
  });
  const current = webhook.data?.webhook;

  return (
    <ListAndForm<WebhookDelivery>
      className="panel"
      headingId="webhook-heading"
      heading="Webhooks"
      intro={
        <>
          <p>
            pts POSTs signed events (rewards, redemptions, milestones, payments) to your URL; check the{' '}
            <code>x-pts-signature</code> header with the signing secret.
          </p>
          {webhook.data ? <p>{current ? <>Sending to {current.url}</> : 'No webhook URL yet.'}</p> : null}
        </>
      }
      before={
        webhook.data ? (
          <>
            {editable ? (
              <WebhookForm
                current={webhook.data.webhook}
                saving={save.isPending}
                error={save.error}
                onSave={(input) => save.mutate(input)}
                testing={test.isPending}
                onTest={() => test.mutate()}
              />
            ) : null}
            {save.data?.webhook.secret ? (
              <ShownOnce title="Signing secret">
                <Secret
                  label="Signing secret"
                  copyLabel="Copy the signing secret"
                  value={save.data.webhook.secret}
                  testId="webhook-secret"
                />
              </ShownOnce>
            ) : null}
            {test.isSuccess ? (
              <p role="status" data-testid="test-result">
                {test.data.result.delivered
                  ? `Test delivered: your endpoint answered ${test.data.result.statusCode}.`
                  : `Test not delivered: ${test.data.result.error ?? 'no answer'}.`}
              </p>
            ) : null}
            <h3>Latest deliveries</h3>
          </>
        ) : null
      }
      problems={[test.error, replay.error]}
      items={webhook.data?.deliveries}
      pending={webhook.isPending}
      error={webhook.error}
      onRetry={() => void webhook.refetch()}
      loadingText="Loading the webhook…"
      emptyText="No delivery yet."
      tableLabel="Webhook deliveries"
      itemKey={(delivery) => delivery.id}
      head={
        <tr>
          <th scope="col">Event</th>
          <th scope="col">Status</th>
          <th scope="col">Answer</th>
          <th scope="col">When</th>
          {editable ? <th scope="col">Actions</th> : null}
        </tr>
      }
      row={(delivery) => (
        <tr key={delivery.id} data-delivery-id={delivery.id}>
          <th scope="row">{delivery.type}</th>
          <td>{delivery.status}</td>
          <td>{delivery.lastStatusCode ?? delivery.lastError ?? '—'}</td>
          <td>{when(delivery.createdAt)}</td>
          {editable ? (
            <td>
              <button
                type="button"
                className="secondary"
                aria-label={`Replay ${delivery.type} of ${when(delivery.createdAt)}`}
                disabled={delivery.status === 'sending' || replay.isPending}
                onClick={() => replay.mutate(delivery.id)}
              >
                Replay
              </button>
            </td>
          ) : null}
        </tr>
      )}
    />
  );
}

/**
 * The brand's webhook endpoint: its URL (the server's SSRF guard and schema answer per field), a new signing
 * secret on request, and a test delivery once an endpoint is set. Save is disabled while a save is under way.
 */
export function WebhookForm(props: {
  current: WebhookEndpoint;
  saving: boolean;
  error: Error | null;
  onSave(input: { url: string; rotateSecret: boolean }): void;
  testing: boolean;
  onTest(): void;
}) {
  const { current } = props;
  const [url, setUrl] = useState<string | undefined>();
  const [rotateSecret, setRotateSecret] = useState(false);
  const { field, general } = useFieldErrors(props.error, 'webhook');
  const shownUrl = url ?? current?.url ?? '';
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onSave({ url: shownUrl.trim(), rotateSecret });
  };
  return (
    <form onSubmit={submit} className="stack narrow" aria-label="Webhook endpoint">
      <InputField
        label="Webhook URL"
        name="url"
        type="url"
        required
        value={shownUrl}
        onChange={(e) => setUrl(e.target.value)}
        field={field('url')}
      />
      {current ? (
        <label className="inline">
          <input type="checkbox" checked={rotateSecret} onChange={(e) => setRotateSecret(e.target.checked)} />
          Issue a new signing secret
        </label>
      ) : null}
      {general}
      <div className="row">
        <button type="submit" disabled={props.saving}>
          Save webhook
        </button>
        {current ? (
          <button type="button" className="secondary" onClick={props.onTest} disabled={props.testing}>
            Send a test
          </button>
        ) : null}
      </div>
    </form>
  );
}

function WordPress({ data }: { data: PortalIntegrations }) {
  return (
    <section aria-labelledby="wp-heading" className="panel">
      <h2 id="wp-heading">WordPress plugin</h2>
      <p>The values of the plugin's settings screen (Settings → pts Loyalty):</p>
      <dl className="facts">
        <dt>core-api URL</dt>
        <dd>
          <code data-testid="wp-api-url">{data.wordpress.apiUrl}</code>{' '}
          <CopyButton text={data.wordpress.apiUrl} label="Copy the URL" />
        </dd>
        <dt>Brand id</dt>
        <dd>
          <code className="link">{data.wordpress.brandId}</code>{' '}
          <CopyButton text={data.wordpress.brandId} label="Copy the brand id" />
        </dd>
        <dt>Security key</dt>
        <dd>{data.wordpress.securityKeyHint}</dd>
      </dl>
    </section>
  );
}

function XHandle({ data, editable }: { data: PortalIntegrations; editable: boolean }) {
  const { brandId } = useBrand();
  const queryClient = useQueryClient();
  const [handle, setHandle] = useState(data.xHandle ?? '');
  const save = useMutation({
    mutationFn: () => api('PUT', `/brands/${brandId}/x-handle`, { xHandle: handle }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: integrationsQuery(brandId).queryKey }),
  });
  const errors = fieldErrors(save.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <section aria-labelledby="x-heading" className="panel">
      <h2 id="x-heading">X (Twitter)</h2>
      <p>{data.xHandle ? `The X bot rewards mentions of @${data.xHandle}.` : 'No X handle: the X bot is off.'}</p>
      {editable ? (
        <form onSubmit={submit} className="row" aria-label="X handle">
          <label>
            X handle (empty turns the bot off)
            <input
              value={handle}
              maxLength={16}
              onChange={(e) => setHandle(e.target.value)}
              {...(errors.xHandle ? { 'aria-invalid': true, 'aria-describedby': 'xHandle-error' } : {})}
            />
            {errors.xHandle ? (
              <span className="error" id="xHandle-error">
                {errors.xHandle}
              </span>
            ) : null}
          </label>
          <button type="submit" disabled={save.isPending}>
            Save handle
          </button>
        </form>
      ) : null}
      {save.isError && !errors.xHandle ? (
        <p role="alert" className="error">
          {describeError(save.error).message}
        </p>
      ) : null}
    </section>
  );
}

function AgentKeys({ editable }: { editable: boolean }) {
  const { brandId } = useBrand();
  const queryClient = useQueryClient();
  const keys = useQuery(agentKeysQuery(brandId));
  const refresh = () => queryClient.invalidateQueries({ queryKey: agentKeysQuery(brandId).queryKey });
  const create = useMutation({
    mutationFn: (input: { name: string; canManageProgram: boolean }) =>
      request(agentKeyCreatedAnswerSchema, 'POST', `/brands/${brandId}/agent-keys`, input),
    onSuccess: refresh,
  });
  const revoke = useMutation({
    mutationFn: (keyId: string) => api('POST', `/brands/${brandId}/agent-keys/${keyId}/revoke`),
    onSuccess: refresh,
  });
  const scopes = (key: AgentKey) => (key.canManageProgram ? 'reads and changes the program' : 'reads');

  return (
    <ListAndForm<AgentKey>
      className="panel"
      headingId="agent-heading"
      heading="Agent keys"
      intro={<p>Keys for AI agents and scripts using the agent API and MCP on this brand's behalf.</p>}
      problems={[revoke.error]}
      items={keys.data?.agentKeys}
      pending={keys.isPending}
      error={keys.error}
      onRetry={() => void keys.refetch()}
      loadingText="Loading the keys…"
      emptyText="No agent key yet."
      tableLabel="Agent keys"
      itemKey={(key) => key.keyId}
      head={
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Key id</th>
          <th scope="col">Scope</th>
          <th scope="col">State</th>
          {editable ? <th scope="col">Actions</th> : null}
        </tr>
      }
      row={(key) => (
        <tr key={key.keyId} data-key-id={key.keyId}>
          <th scope="row">{key.name}</th>
          <td>
            <code>{key.keyId}</code>
          </td>
          <td>
            {scopes(key)}
            {key.sharedWithOtherBrands ? ' (also other brands: the operator manages it)' : ''}
          </td>
          <td>{key.revokedAt ? `revoked ${when(key.revokedAt)}` : 'active'}</td>
          {editable ? (
            <td>
              {!key.revokedAt && !key.sharedWithOtherBrands ? (
                <button
                  type="button"
                  className="secondary"
                  aria-label={`Revoke ${key.name}`}
                  disabled={revoke.isPending}
                  onClick={() => revoke.mutate(key.keyId)}
                >
                  Revoke
                </button>
              ) : null}
            </td>
          ) : null}
        </tr>
      )}
      after={
        <>
          {editable ? (
            // A new form (blank) once a key is made, so a second key starts from nothing.
            <AgentKeyForm
              key={create.data?.keyId ?? 'first'}
              saving={create.isPending}
              error={create.error}
              onSave={(input) => create.mutate(input)}
            />
          ) : null}
          {create.isSuccess ? (
            <ShownOnce title={`Agent key ${create.data.keyId}`}>
              <Secret label="Secret" copyLabel="Copy the secret" value={create.data.secret} testId="agent-secret" />
            </ShownOnce>
          ) : null}
        </>
      }
    />
  );
}

/** A new agent key: its name and whether it may change the program. */
export function AgentKeyForm(props: {
  saving: boolean;
  error: Error | null;
  onSave(input: { name: string; canManageProgram: boolean }): void;
}) {
  const [name, setName] = useState('');
  const [manage, setManage] = useState(false);
  const { field, general } = useFieldErrors(props.error, 'agent-key');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onSave({ name, canManageProgram: manage });
  };
  return (
    <form onSubmit={submit} className="stack narrow" aria-label="Create an agent key">
      <InputField
        label="Key name"
        name="name"
        required
        maxLength={200}
        value={name}
        onChange={(e) => setName(e.target.value)}
        field={field('name')}
      />
      <label className="inline">
        <input type="checkbox" checked={manage} onChange={(e) => setManage(e.target.checked)} />
        May change the program (rules, perks, campaigns)
      </label>
      {general}
      <button type="submit" disabled={props.saving}>
        Create key
      </button>
    </form>
  );
}
