import type { Perk, UpdatePerkRequest } from '@pts/shared/schemas/perks';
import { type FormEvent, useState } from 'react';
import { fieldErrors } from '../api.ts';

/** `2027-01-31T18:00` (the browser's local time, what datetime-local shows) ↔ ISO 8601. */
const toLocalInput = (iso: string | null) => {
  if (!iso) return '';
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocalInput = (value: string) => (value ? new Date(value).toISOString() : null);

/**
 * A perk's settings, for a new perk or an edit. Every message next to a field is the server's, from the
 * shared schema (or the perk service for rules across fields, such as the window's order).
 */
export function PerkForm(props: {
  perk: Perk | undefined;
  saving: boolean;
  error: Error | null;
  onCancel(): void;
  onSave(settings: UpdatePerkRequest & { name: string; cost: number }): void;
}) {
  const { perk } = props;
  const [name, setName] = useState(perk?.name ?? '');
  const [description, setDescription] = useState(perk?.description ?? '');
  const [imageUrl, setImageUrl] = useState(perk?.imageUrl ?? '');
  const [cost, setCost] = useState(String(perk?.cost ?? 100));
  const [unlimitedSupply, setUnlimitedSupply] = useState(perk ? perk.maxSupply === null : true);
  const [supply, setSupply] = useState(String(perk?.maxSupply ?? 100));
  const [unlimitedPerMember, setUnlimitedPerMember] = useState(perk ? perk.maxPerUser === 0 : false);
  const [perMember, setPerMember] = useState(String(perk && perk.maxPerUser > 0 ? perk.maxPerUser : 1));
  const [startsAt, setStartsAt] = useState(toLocalInput(perk?.startsAt ?? null));
  const [endsAt, setEndsAt] = useState(toLocalInput(perk?.endsAt ?? null));
  const [active, setActive] = useState(perk?.active ?? true);
  const errors = fieldErrors(props.error);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onSave({
      name,
      description,
      imageUrl: imageUrl.trim() ? imageUrl.trim() : null,
      cost: Number(cost),
      maxSupply: unlimitedSupply ? null : Number(supply),
      maxPerUser: unlimitedPerMember ? 0 : Number(perMember),
      startsAt: fromLocalInput(startsAt),
      endsAt: fromLocalInput(endsAt),
      active,
    });
  };
  const fieldError = (field: string) =>
    errors[field] ? (
      <span className="error" id={`perk-${field}-error`}>
        {errors[field]}
      </span>
    ) : null;
  const described = (field: string) =>
    errors[field] ? { 'aria-invalid': true, 'aria-describedby': `perk-${field}-error` } : {};
  const title = perk ? `Edit ${perk.name}` : 'New perk';

  return (
    <form className="rule-form stack" onSubmit={submit} aria-label={perk ? 'Edit perk' : 'New perk'}>
      <h2>{title}</h2>
      <label>
        Name
        <input
          name="name"
          required
          maxLength={100}
          value={name}
          onChange={(e) => setName(e.target.value)}
          {...described('name')}
        />
        {fieldError('name')}
      </label>
      <label>
        Description
        <textarea
          name="description"
          rows={2}
          maxLength={2000}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          {...described('description')}
        />
        {fieldError('description')}
      </label>
      <label>
        Image URL (https://…)
        <input
          name="imageUrl"
          type="url"
          value={imageUrl}
          onChange={(e) => setImageUrl(e.target.value)}
          {...described('imageUrl')}
        />
        {fieldError('imageUrl')}
      </label>
      <label>
        Cost (pts)
        <input
          name="cost"
          type="number"
          min={0}
          required
          value={cost}
          onChange={(e) => setCost(e.target.value)}
          {...described('cost')}
        />
        {fieldError('cost')}
      </label>
      <fieldset>
        <legend>Supply (perks ever claimed)</legend>
        <label className="inline">
          <input type="checkbox" checked={unlimitedSupply} onChange={(e) => setUnlimitedSupply(e.target.checked)} />{' '}
          Unlimited supply
        </label>
        {unlimitedSupply ? null : (
          <label>
            Supply
            <input
              name="maxSupply"
              type="number"
              min={1}
              required
              value={supply}
              onChange={(e) => setSupply(e.target.value)}
              {...described('maxSupply')}
            />
          </label>
        )}
        {fieldError('maxSupply')}
      </fieldset>
      <fieldset>
        <legend>Per member</legend>
        <label className="inline">
          <input
            type="checkbox"
            checked={unlimitedPerMember}
            onChange={(e) => setUnlimitedPerMember(e.target.checked)}
          />{' '}
          Unlimited per member
        </label>
        {unlimitedPerMember ? null : (
          <label>
            Most one member may claim
            <input
              name="maxPerUser"
              type="number"
              min={1}
              required
              value={perMember}
              onChange={(e) => setPerMember(e.target.value)}
              {...described('maxPerUser')}
            />
          </label>
        )}
        {fieldError('maxPerUser')}
      </fieldset>
      <fieldset>
        <legend>Redemption window (your local time; empty = open)</legend>
        <label>
          Opens
          <input
            name="startsAt"
            type="datetime-local"
            value={startsAt}
            onChange={(e) => setStartsAt(e.target.value)}
            {...described('startsAt')}
          />
          {fieldError('startsAt')}
        </label>
        <label>
          Closes
          <input
            name="endsAt"
            type="datetime-local"
            value={endsAt}
            onChange={(e) => setEndsAt(e.target.value)}
            {...described('endsAt')}
          />
          {fieldError('endsAt')}
        </label>
      </fieldset>
      <label className="inline">
        <input type="checkbox" name="active" checked={active} onChange={(e) => setActive(e.target.checked)} /> Active
      </label>
      {props.error && Object.keys(errors).length === 0 ? (
        <p role="alert" className="error">
          {props.error.message}
        </p>
      ) : null}
      <div className="row">
        <button type="submit" disabled={props.saving}>
          {props.saving ? 'Saving… (waiting for the chain)' : 'Save perk'}
        </button>
        <button type="button" className="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** `unlimited`, or the number. */
export const limitText = (value: number | null, unlimited: number | null) =>
  value === unlimited ? 'unlimited' : String(value);

/** The window in words, in the reader's locale. */
export function windowText(perk: Pick<Perk, 'startsAt' | 'endsAt'>): string {
  const at = (iso: string) => new Date(iso).toLocaleString();
  if (perk.startsAt && perk.endsAt) return `${at(perk.startsAt)} – ${at(perk.endsAt)}`;
  if (perk.startsAt) return `from ${at(perk.startsAt)}`;
  if (perk.endsAt) return `until ${at(perk.endsAt)}`;
  return 'always';
}
