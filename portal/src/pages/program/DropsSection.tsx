import type { Drop, PortalCreateDropRequest } from '@pts/shared/schemas/compat';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../../api.ts';
import { canEdit, useBrand } from '../../session.ts';
import { TableWrap } from '../../TableWrap.tsx';
import { fromLocalInput, toLocalInput, useFieldErrors, when, windowStatus } from './fields.tsx';

/**
 * The brand's drops: an amount each member can claim (up to the per-member limit) while the window is open
 * and the supply lasts, claimed through the bots, the SDK or `/services/drops/claim`. Admins and owners
 * create them; a viewer sees the list and what is claimed.
 */
export function DropsSection() {
  const { brandId, membership } = useBrand();
  const queryClient = useQueryClient();
  const editable = canEdit(membership);
  const [creating, setCreating] = useState(false);
  const key = ['drops', brandId];
  const drops = useQuery({
    queryKey: key,
    queryFn: () => api<{ drops: Drop[] }>('GET', `/brands/${brandId}/drops`),
  });
  const create = useMutation({
    mutationFn: (body: PortalCreateDropRequest) => api('POST', `/brands/${brandId}/drops`, body),
    onSuccess: async () => {
      setCreating(false);
      // A first drop also creates the brand's drop_claim rule.
      await queryClient.invalidateQueries({ queryKey: key });
      await queryClient.invalidateQueries({ queryKey: ['rules', brandId] });
    },
  });

  return (
    <section aria-labelledby="drops-heading">
      <h2 id="drops-heading">Drops</h2>
      <p>
        A drop pays its amount to each member who claims it while it is open, until its supply is gone. Claims are
        recorded as <code>drop_claim</code> events.
      </p>
      {editable ? (
        <div>
          <button
            type="button"
            onClick={() => {
              create.reset();
              setCreating(true);
            }}
          >
            New drop
          </button>
        </div>
      ) : null}
      {creating ? (
        <DropForm
          saving={create.isPending}
          error={create.error}
          onCancel={() => setCreating(false)}
          onSave={(body) => create.mutate(body)}
        />
      ) : null}
      {drops.isPending ? <p className="loading">Loading the drops…</p> : null}
      {drops.isError ? <p role="alert">{drops.error.message}</p> : null}
      {drops.data ? (
        drops.data.drops.length === 0 ? (
          <p className="note">No drop yet.</p>
        ) : (
          <TableWrap label="Drops">
            <table>
              <caption className="visually-hidden">Drops</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Claimed</th>
                  <th scope="col">Per member</th>
                  <th scope="col">Window</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {drops.data.drops.map((drop) => (
                  <tr key={drop.dropId} data-drop={drop.dropId}>
                    <th scope="row">{drop.name}</th>
                    <td>{drop.amount} pts</td>
                    <td>
                      {drop.claimed} of {drop.totalSupply}
                    </td>
                    <td>{drop.perUserLimit}</td>
                    <td>
                      {when(drop.startsAt)} – {when(drop.endsAt)}
                    </td>
                    <td>{drop.remaining === 0 ? 'claimed out' : windowStatus(drop.startsAt, drop.endsAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )
      ) : null}
    </section>
  );
}

function DropForm(props: {
  saving: boolean;
  error: Error | null;
  onCancel(): void;
  onSave(body: PortalCreateDropRequest): void;
}) {
  const [name, setName] = useState('');
  const [amount, setAmount] = useState('50');
  const [supply, setSupply] = useState('100');
  const [perMember, setPerMember] = useState('1');
  const [startsAt, setStartsAt] = useState('');
  const [endsAt, setEndsAt] = useState(toLocalInput(new Date(Date.now() + 24 * 3600_000).toISOString()));
  const { message, described, general } = useFieldErrors(props.error, 'drop');

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const opens = fromLocalInput(startsAt);
    props.onSave({
      ...(name.trim() ? { name: name.trim() } : {}),
      amount: Number(amount),
      totalSupply: Number(supply),
      perUserLimit: Number(perMember),
      ...(opens ? { startsAt: opens } : {}),
      endsAt: fromLocalInput(endsAt) ?? '',
    });
  };

  return (
    <form className="rule-form stack" onSubmit={submit} aria-label="New drop">
      <h3>New drop</h3>
      <label>
        Name (members see it)
        <input
          name="name"
          maxLength={100}
          value={name}
          onChange={(e) => setName(e.target.value)}
          {...described('name')}
        />
        {message('name')}
      </label>
      <label>
        Amount per claim (pts)
        <input
          name="amount"
          type="number"
          min={1}
          required
          value={amount}
          onChange={(e) => setAmount(e.target.value)}
          {...described('amount')}
        />
        {message('amount')}
      </label>
      <label>
        Supply (claims in all)
        <input
          name="totalSupply"
          type="number"
          min={1}
          required
          value={supply}
          onChange={(e) => setSupply(e.target.value)}
          {...described('totalSupply')}
        />
        {message('totalSupply')}
      </label>
      <label>
        Claims per member
        <input
          name="perUserLimit"
          type="number"
          min={1}
          required
          value={perMember}
          onChange={(e) => setPerMember(e.target.value)}
          {...described('perUserLimit')}
        />
        {message('perUserLimit')}
      </label>
      <fieldset>
        <legend>Window (your local time)</legend>
        <label>
          Opens (empty = now)
          <input
            name="startsAt"
            type="datetime-local"
            value={startsAt}
            onChange={(e) => setStartsAt(e.target.value)}
            {...described('startsAt')}
          />
          {message('startsAt')}
        </label>
        <label>
          Closes
          <input
            name="endsAt"
            type="datetime-local"
            required
            value={endsAt}
            onChange={(e) => setEndsAt(e.target.value)}
            {...described('endsAt')}
          />
          {message('endsAt')}
        </label>
      </fieldset>
      {general}
      <div className="row">
        <button type="submit" disabled={props.saving}>
          Create drop
        </button>
        <button type="button" className="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
