import type { ComponentProps, ReactNode } from 'react';
import { describeError, fieldErrors } from '../../errors/describe.ts';

/** `2027-01-31T18:00` (the browser's local time, what datetime-local shows) ↔ ISO 8601. */
export const toLocalInput = (iso: string | null | undefined) => {
  if (!iso) return '';
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
export const fromLocalInput = (value: string) => (value ? new Date(value).toISOString() : undefined);

/** A short local date and time for tables. */
export const when = (iso: string) =>
  new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * The server's message for each field of a refused save (from the shared schema or the service), with the
 * attributes that tie a field to its message; `prefix` keeps ids unique when two forms are on the page.
 */
export function useFieldErrors(error: Error | null, prefix: string) {
  const errors = fieldErrors(error);
  const id = (name: string) => `${prefix}-${name}-error`;
  return {
    errors,
    /** The message under a field (text, never markup). */
    message: (name: string) =>
      errors[name] ? (
        <span className="error" id={id(name)}>
          {errors[name]}
        </span>
      ) : null,
    described: (name: string) => (errors[name] ? { 'aria-invalid': true, 'aria-describedby': id(name) } : {}),
    /** The message and attributes of one field, for `InputField` and `TextAreaField`. */
    field: (name: string): FieldMessage => ({
      error: errors[name] ? (
        <span className="error" id={id(name)}>
          {errors[name]}
        </span>
      ) : null,
      attributes: errors[name] ? { 'aria-invalid': true, 'aria-describedby': id(name) } : {},
    }),
    /** A refusal that names no field (shown once, above the buttons). */
    general:
      error && Object.keys(errors).length === 0 ? (
        <p role="alert" className="error">
          {describeError(error).message}
        </p>
      ) : null,
  };
}

/** A field's message (text, never markup) and the attributes that point the field at it. */
export interface FieldMessage {
  error: ReactNode;
  attributes: { 'aria-invalid'?: true; 'aria-describedby'?: string };
}

type Labelled = { label: ReactNode; field?: FieldMessage | undefined };

/**
 * A labelled input with its message under it: the markup the Program page's forms and the perk form share.
 * `field` comes from `useFieldErrors(…).field(name)` or `fieldMessage(…)`.
 */
export function InputField({ label, field, ...input }: ComponentProps<'input'> & Labelled) {
  return (
    <label>
      {label}
      <input {...input} {...field?.attributes} />
      {field?.error}
    </label>
  );
}

/** A labelled text area with its message under it. */
export function TextAreaField({ label, field, ...textarea }: ComponentProps<'textarea'> & Labelled) {
  return (
    <label>
      {label}
      <textarea {...textarea} {...field?.attributes} />
      {field?.error}
    </label>
  );
}

/** The submit and Cancel buttons under a form. */
export function FormButtons(props: { submit: ReactNode; saving: boolean; onCancel(): void }) {
  return (
    <div className="row">
      <button type="submit" disabled={props.saving}>
        {props.submit}
      </button>
      <button type="button" className="secondary" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}

/**
 * A limit that may be unlimited: a checkbox and, unless it is ticked, the number (a perk's supply and
 * per-member limit, a rule's claims per member). The message shows under both, whichever was refused.
 */
export function LimitField(props: {
  legend: string;
  unlimitedLabel: string;
  unlimited: boolean;
  onUnlimited(unlimited: boolean): void;
  label: string;
  name: string;
  value: string;
  onChange(value: string): void;
  field: FieldMessage;
}) {
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      <label className="inline">
        <input
          type="checkbox"
          name={`${props.name}Unlimited`}
          checked={props.unlimited}
          onChange={(e) => props.onUnlimited(e.target.checked)}
        />{' '}
        {props.unlimitedLabel}
      </label>
      {props.unlimited ? null : (
        <InputField
          label={props.label}
          name={props.name}
          type="number"
          min={1}
          required
          value={props.value}
          onChange={(e) => props.onChange(e.target.value)}
          field={{ ...props.field, error: null }}
        />
      )}
      {props.field.error}
    </fieldset>
  );
}
