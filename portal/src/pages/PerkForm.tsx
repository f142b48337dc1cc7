import type { Perk, UpdatePerkRequest } from '@pts/shared/schemas/perks';
import { type FormEvent, useState } from 'react';
import {
  FormButtons,
  fromLocalInput,
  InputField,
  LimitField,
  TextAreaField,
  toLocalInput,
  useFieldErrors,
} from './program/fields.tsx';

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
  const { field, general } = useFieldErrors(props.error, 'perk');

  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onSave({
      name,
      description,
      imageUrl: imageUrl.trim() ? imageUrl.trim() : null,
      cost: Number(cost),
      maxSupply: unlimitedSupply ? null : Number(supply),
      maxPerUser: unlimitedPerMember ? 0 : Number(perMember),
      startsAt: fromLocalInput(startsAt) ?? null,
      endsAt: fromLocalInput(endsAt) ?? null,
      active,
    });
  };
  const title = perk ? `Edit ${perk.name}` : 'New perk';

  return (
    <form className="rule-form stack" onSubmit={submit} aria-label={perk ? 'Edit perk' : 'New perk'}>
      <h2>{title}</h2>
      <InputField
        label="Name"
        name="name"
        required
        maxLength={100}
        value={name}
        onChange={(e) => setName(e.target.value)}
        field={field('name')}
      />
      <TextAreaField
        label="Description"
        name="description"
        rows={2}
        maxLength={2000}
        value={description}
        onChange={(e) => setDescription(e.target.value)}
        field={field('description')}
      />
      <InputField
        label="Image URL (https://…)"
        name="imageUrl"
        type="url"
        value={imageUrl}
        onChange={(e) => setImageUrl(e.target.value)}
        field={field('imageUrl')}
      />
      <InputField
        label="Cost (pts)"
        name="cost"
        type="number"
        min={0}
        required
        value={cost}
        onChange={(e) => setCost(e.target.value)}
        field={field('cost')}
      />
      <LimitField
        legend="Supply (perks ever claimed)"
        unlimitedLabel="Unlimited supply"
        unlimited={unlimitedSupply}
        onUnlimited={setUnlimitedSupply}
        label="Supply"
        name="maxSupply"
        value={supply}
        onChange={setSupply}
        field={field('maxSupply')}
      />
      <LimitField
        legend="Per member"
        unlimitedLabel="Unlimited per member"
        unlimited={unlimitedPerMember}
        onUnlimited={setUnlimitedPerMember}
        label="Most one member may claim"
        name="maxPerUser"
        value={perMember}
        onChange={setPerMember}
        field={field('maxPerUser')}
      />
      <fieldset>
        <legend>Redemption window (your local time; empty = open)</legend>
        <InputField
          label="Opens"
          name="startsAt"
          type="datetime-local"
          value={startsAt}
          onChange={(e) => setStartsAt(e.target.value)}
          field={field('startsAt')}
        />
        <InputField
          label="Closes"
          name="endsAt"
          type="datetime-local"
          value={endsAt}
          onChange={(e) => setEndsAt(e.target.value)}
          field={field('endsAt')}
        />
      </fieldset>
      <label className="inline">
        <input type="checkbox" name="active" checked={active} onChange={(e) => setActive(e.target.checked)} /> Active
      </label>
      {general}
      <FormButtons
        submit={props.saving ? 'Saving… (waiting for the chain)' : 'Save perk'}
        saving={props.saving}
        onCancel={props.onCancel}
      />
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
