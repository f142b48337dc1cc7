import type { Drop, PortalCreateDropRequest, UpdateDropRequest } from '@pts/shared/schemas/compat';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../../api.ts';
import { dropsQuery, rulesQuery } from '../../queries/program.ts';
import { canEdit, useBrand } from '../../session.ts';
import { ListAndForm } from '../../ui/ListAndForm.tsx';
import { FormButtons, fromLocalInput, InputField, toLocalInput, useFieldErrors, when } from './fields.tsx';

type Save = { dropId?: string; body: PortalCreateDropRequest | UpdateDropRequest };

/**
 * The brand's drops: an amount each member can claim (up to the per-member limit) while the window is open
 * and the supply lasts, claimed through the bots, the SDK or `/services/drops/claim`. Admins and owners
 * create them, change them where it is safe (docs/portal.md, "Changing a drop") and end them early; a viewer sees the
 * list and what is claimed.
 */
export function DropsSection() {
  const { brandId, membership } = useBrand();
  const queryClient = useQueryClient();
  const editable = canEdit(membership);
  const drops = useQuery(dropsQuery(brandId));
  const save = useMutation({
    mutationFn: ({ dropId, body }: Save) =>
      dropId ? api('PATCH', `/brands/${brandId}/drops/${dropId}`, body) : api('POST', `/brands/${brandId}/drops`, body),
    onSuccess: async () => {
      // A first drop also creates the brand's drop_claim rule.
      await queryClient.invalidateQueries({ queryKey: dropsQuery(brandId).queryKey });
      await queryClient.invalidateQueries({ queryKey: rulesQuery(brandId).queryKey });
    },
  });
  const end = useMutation({
    mutationFn: (dropId: string) => api('POST', `/brands/${brandId}/drops/${dropId}/end`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: dropsQuery(brandId).queryKey }),
  });

  return (
    <ListAndForm<Drop>
      headingId="drops-heading"
      heading="Drops"
      intro={
        <p>
          A drop pays its amount to each member who claims it while it is open, until its supply is gone. Claims are
          recorded as <code>drop_claim</code> events.
        </p>
      }
      newLabel={editable ? 'New drop' : undefined}
      onOpen={() => save.reset()}
      items={drops.data?.drops}
      pending={drops.isPending}
      error={drops.error}
      onRetry={() => void drops.refetch()}
      problems={[end.error]}
      loadingText="Loading the drops…"
      emptyText="No drop yet."
      tableLabel="Drops"
      itemKey={(drop) => drop.dropId}
      form={({ item, close }) => (
        <DropForm
          drop={item}
          saving={save.isPending}
          error={save.error}
          onCancel={close}
          onSave={(body) => save.mutate({ ...(item ? { dropId: item.dropId } : {}), body }, { onSuccess: close })}
        />
      )}
      head={
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Amount</th>
          <th scope="col">Claimed</th>
          <th scope="col">Per member</th>
          <th scope="col">Window</th>
          <th scope="col">Status</th>
          {editable ? <th scope="col">Actions</th> : null}
        </tr>
      }
      row={(drop, edit) => {
        // The server's status, by its clock and the claims' own rule: never this browser's clock.
        const { status } = drop;
        return (
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
            <td>{drop.remaining === 0 && status !== 'ended' ? 'claimed out' : status}</td>
            {editable ? (
              <td className="actions">
                {status === 'ended' ? null : (
                  <>
                    <button type="button" aria-label={`Edit ${drop.name}`} onClick={edit}>
                      Edit
                    </button>
                    <button
                      type="button"
                      aria-label={`End now ${drop.name}`}
                      disabled={end.isPending}
                      onClick={() => {
                        if (window.confirm(`End ${drop.name} now? Claims stop at once; what was claimed stays.`)) {
                          end.mutate(drop.dropId);
                        }
                      }}
                    >
                      End now
                    </button>
                  </>
                )}
              </td>
            ) : null}
          </tr>
        );
      }}
    />
  );
}

/**
 * A new drop, or the changes to one: only the fields the person changed are sent, and those the service
 * would refuse (docs/portal.md, "Changing a drop") are read-only, with the reason.
 */
function DropForm(props: {
  drop: Drop | undefined;
  saving: boolean;
  error: Error | null;
  onCancel(): void;
  onSave(body: PortalCreateDropRequest | UpdateDropRequest): void;
}) {
  const { drop } = props;
  const initial = {
    name: drop?.name ?? '',
    amount: String(drop?.amount ?? 50),
    totalSupply: String(drop?.totalSupply ?? 100),
    perUserLimit: String(drop?.perUserLimit ?? 1),
    startsAt: drop ? toLocalInput(drop.startsAt) : '',
    endsAt: toLocalInput(drop?.endsAt ?? new Date(Date.now() + 24 * 3600_000).toISOString()),
  };
  const [values, setValues] = useState(initial);
  const set = (name: keyof typeof initial) => (e: { target: { value: string } }) =>
    setValues((old) => ({ ...old, [name]: e.target.value }));
  const { field, general } = useFieldErrors(props.error, 'drop');
  const claimed = Boolean(drop && drop.claimed > 0);
  const opened = Boolean(drop && drop.status !== 'scheduled');

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const all = {
      name: values.name.trim(),
      amount: Number(values.amount),
      totalSupply: Number(values.totalSupply),
      perUserLimit: Number(values.perUserLimit),
      startsAt: fromLocalInput(values.startsAt),
      endsAt: fromLocalInput(values.endsAt) ?? '',
    };
    if (!drop) {
      const { name, startsAt, ...rest } = all;
      return props.onSave({ ...(name ? { name } : {}), ...(startsAt ? { startsAt } : {}), ...rest });
    }
    const changed = (Object.keys(initial) as (keyof typeof initial)[]).filter((name) => values[name] !== initial[name]);
    props.onSave(Object.fromEntries(changed.map((name) => [name, all[name]])) as UpdateDropRequest);
  };
  const title = drop ? `Edit ${drop.name}` : 'New drop';

  return (
    <form className="rule-form stack" onSubmit={submit} aria-label={title}>
      <h3>{title}</h3>
      <InputField
        label="Name (members see it)"
        name="name"
        maxLength={100}
        required={Boolean(drop)}
        value={values.name}
        onChange={set('name')}
        field={field('name')}
      />
      <InputField
        label={claimed ? 'Amount per claim (pts; fixed once claimed)' : 'Amount per claim (pts)'}
        name="amount"
        type="number"
        min={1}
        required
        readOnly={claimed}
        value={values.amount}
        onChange={set('amount')}
        field={field('amount')}
      />
      <InputField
        label={drop ? `Supply (claims in all; at least the ${drop.claimed} claimed)` : 'Supply (claims in all)'}
        name="totalSupply"
        type="number"
        min={Math.max(1, drop?.claimed ?? 0)}
        required
        value={values.totalSupply}
        onChange={set('totalSupply')}
        field={field('totalSupply')}
      />
      <InputField
        label="Claims per member"
        name="perUserLimit"
        type="number"
        min={1}
        required
        value={values.perUserLimit}
        onChange={set('perUserLimit')}
        field={field('perUserLimit')}
      />
      <fieldset>
        <legend>Window (your local time)</legend>
        <InputField
          label={drop ? (opened ? 'Opened (fixed once open)' : 'Opens') : 'Opens (empty = now)'}
          name="startsAt"
          type="datetime-local"
          required={Boolean(drop)}
          readOnly={opened}
          value={values.startsAt}
          onChange={set('startsAt')}
          field={field('startsAt')}
        />
        <InputField
          label="Closes"
          name="endsAt"
          type="datetime-local"
          required
          value={values.endsAt}
          onChange={set('endsAt')}
          field={field('endsAt')}
        />
      </fieldset>
      {general}
      <FormButtons submit={drop ? 'Save drop' : 'Create drop'} saving={props.saving} onCancel={props.onCancel} />
    </form>
  );
}
