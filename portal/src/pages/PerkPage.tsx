import { PERK_STATUS_TEXT } from '@pts/shared/rules/perk-status';
import type { AddConstraintRequest } from '@pts/shared/schemas/constraints';
import type { UpdatePerkRequest } from '@pts/shared/schemas/perks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api } from '../api.ts';
import { describeError, fieldErrors } from '../errors/describe.ts';
import { ErrorNote } from '../errors/ErrorNote.tsx';
import { perkQuery } from '../queries/perks.ts';
import { canEdit, useBrand } from '../session.ts';
import { TableWrap } from '../TableWrap.tsx';
import { limitText, PerkForm, windowText } from './PerkForm.tsx';

/** One perk: its settings, collection on chain, eligibility constraints and redemptions. */
export function PerkPage() {
  const { brandId, membership } = useBrand();
  const { perkId = '' } = useParams();
  const queryClient = useQueryClient();
  const editable = canEdit(membership);
  const [editing, setEditing] = useState(false);
  const perkOptions = perkQuery(brandId, perkId);
  const key = perkOptions.queryKey;
  const detail = useQuery(perkOptions);
  const refresh = () => queryClient.invalidateQueries({ queryKey: key });
  const save = useMutation({
    mutationFn: (settings: UpdatePerkRequest) => api('PATCH', `/brands/${brandId}/perks/${perkId}`, settings),
    onSuccess: async () => {
      setEditing(false);
      await refresh();
    },
  });
  // Archive undoes a perk made by mistake: out of every catalogue, redemptions refused; restore brings it
  // back inactive, offered again once someone activates it.
  const archive = useMutation({
    mutationFn: (change: 'archive' | 'restore') => api('POST', `/brands/${brandId}/perks/${perkId}/${change}`),
    onSuccess: refresh,
  });
  const removeConstraint = useMutation({
    mutationFn: (constraintId: string) =>
      api('DELETE', `/brands/${brandId}/perks/${perkId}/constraints/${constraintId}`),
    onSuccess: refresh,
  });

  if (detail.isPending) return <p className="loading">Loading the perk…</p>;
  if (detail.isError) return <ErrorNote error={detail.error} onRetry={() => void detail.refetch()} />;
  const { perk, collection, constraints, redemptions } = detail.data;
  return (
    <section>
      <p>
        <Link to={`/brands/${brandId}/perks`}>← All perks</Link>
      </p>
      <h1 className="perk-name">{perk.name}</h1>
      <p className="perk-description">{perk.description}</p>
      <dl className="facts">
        <dt>Cost</dt>
        <dd>{perk.cost} pts</dd>
        <dt>Supply</dt>
        <dd>{limitText(perk.maxSupply, null)}</dd>
        <dt>Per member</dt>
        <dd>{limitText(perk.maxPerUser, 0)}</dd>
        <dt>Window</dt>
        <dd>{windowText(perk)}</dd>
        <dt>Image</dt>
        <dd>
          {perk.imageUrl ? (
            <a href={perk.imageUrl} rel="noreferrer noopener" target="_blank">
              {perk.imageUrl}
            </a>
          ) : (
            'none'
          )}
        </dd>
        <dt>Status</dt>
        <dd data-status={perk.status}>
          {perk.archivedAt
            ? `archived ${new Date(perk.archivedAt).toLocaleString()}: in no catalogue, redemptions refused`
            : PERK_STATUS_TEXT[perk.status]}
        </dd>
        <dt>Collection on chain</dt>
        <dd>
          <code className="link" data-testid="collection-address">
            {collection.contractAddress ?? 'PerkNFT not configured'}
          </code>{' '}
          #{collection.collectionId}
        </dd>
      </dl>
      {editable && !editing ? (
        <p className="row">
          {perk.archivedAt ? null : (
            <button type="button" onClick={() => setEditing(true)}>
              Edit perk
            </button>
          )}
          {perk.archivedAt ? (
            <button type="button" disabled={archive.isPending} onClick={() => archive.mutate('restore')}>
              Restore perk
            </button>
          ) : (
            <button
              type="button"
              className="danger"
              disabled={archive.isPending}
              onClick={() => {
                if (window.confirm(`Archive ${perk.name}? It leaves the catalogue and cannot be redeemed.`)) {
                  archive.mutate('archive');
                }
              }}
            >
              Archive perk
            </button>
          )}
        </p>
      ) : null}
      {archive.isError ? (
        <p role="alert" className="error">
          {describeError(archive.error).message}
        </p>
      ) : null}
      {archive.isSuccess ? (
        <p role="status">
          {perk.archivedAt ? 'Archived: members no longer see it.' : 'Restored, inactive: edit it to offer it again.'}
        </p>
      ) : null}
      {editing ? (
        <PerkForm
          perk={perk}
          saving={save.isPending}
          error={save.error}
          onCancel={() => setEditing(false)}
          onSave={(settings) => save.mutate(settings)}
        />
      ) : null}

      <h2>Eligibility constraints</h2>
      {constraints.length === 0 ? <p>None: every member may redeem.</p> : null}
      <ul className="cards">
        {constraints.map((constraint) => (
          <li key={constraint.constraintId}>
            <span>
              {constraint.kind}: {JSON.stringify(constraint.config)}
            </span>{' '}
            {editable ? (
              <button
                type="button"
                className="secondary"
                aria-label={`Remove constraint ${constraint.kind}`}
                onClick={() => removeConstraint.mutate(constraint.constraintId)}
              >
                Remove
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      {editable ? <ConstraintForm brandId={brandId} perkId={perkId} onAdded={refresh} /> : null}

      <h2>Redemptions</h2>
      {redemptions.length === 0 ? (
        <p>No redemptions yet.</p>
      ) : (
        <TableWrap label="Redemptions">
          <table>
            <caption className="visually-hidden">Redemptions</caption>
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col">Status</th>
                <th scope="col">Code</th>
                <th scope="col">Cost</th>
                <th scope="col">When</th>
              </tr>
            </thead>
            <tbody>
              {redemptions.map((redemption) => (
                <tr key={redemption.redemptionId} data-redemption-id={redemption.redemptionId}>
                  <th scope="row">
                    <Link to={`/brands/${brandId}/members/${encodeURIComponent(redemption.userKey)}`}>
                      {redemption.userKey}
                    </Link>
                  </th>
                  <td>{redemption.status}</td>
                  <td>{redemption.confirmationCode}</td>
                  <td>{redemption.cost} pts</td>
                  <td>{new Date(redemption.createdAt).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

function ConstraintForm(props: { brandId: string; perkId: string; onAdded(): void }) {
  const [kind, setKind] = useState<AddConstraintRequest['kind']>('min_balance');
  const [amount, setAmount] = useState('100');
  const [url, setUrl] = useState('');
  const [platform, setPlatform] = useState<'discord' | 'telegram'>('discord');
  const [guildId, setGuildId] = useState('');
  const [role, setRole] = useState('');
  const add = useMutation({
    mutationFn: (body: AddConstraintRequest) =>
      api('POST', `/brands/${props.brandId}/perks/${props.perkId}/constraints`, body),
    onSuccess: props.onAdded,
  });
  const errors = fieldErrors(add.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (kind === 'min_balance') add.mutate({ kind, amount: Number(amount) });
    else if (kind === 'external_api') add.mutate({ kind, url });
    else add.mutate({ kind, platform, guildId, role });
  };
  return (
    <form className="stack narrow" onSubmit={submit} aria-label="Add a constraint">
      <label>
        Constraint
        <select name="kind" value={kind} onChange={(e) => setKind(e.target.value as AddConstraintRequest['kind'])}>
          <option value="min_balance">holds at least some pts</option>
          <option value="external_api">your API says yes</option>
          <option value="chat_role">has a Discord or Telegram role</option>
        </select>
      </label>
      {kind === 'min_balance' ? (
        <label>
          Least pts held
          <input type="number" min={1} required value={amount} onChange={(e) => setAmount(e.target.value)} />
        </label>
      ) : null}
      {kind === 'external_api' ? (
        <label>
          API URL (answers {'{"eligible": true|false}'})
          <input type="url" required value={url} onChange={(e) => setUrl(e.target.value)} />
        </label>
      ) : null}
      {kind === 'chat_role' ? (
        <>
          <label>
            Platform
            <select value={platform} onChange={(e) => setPlatform(e.target.value as 'discord' | 'telegram')}>
              <option value="discord">Discord</option>
              <option value="telegram">Telegram</option>
            </select>
          </label>
          <label>
            Server or group id
            <input required value={guildId} onChange={(e) => setGuildId(e.target.value)} />
          </label>
          <label>
            Role
            <input required value={role} onChange={(e) => setRole(e.target.value)} />
          </label>
        </>
      ) : null}
      {add.error ? (
        <p role="alert" className="error">
          {Object.values(errors)[0] ?? describeError(add.error).message}
        </p>
      ) : null}
      <div className="row">
        <button type="submit" disabled={add.isPending}>
          Add constraint
        </button>
      </div>
    </form>
  );
}
