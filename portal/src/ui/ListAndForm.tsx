import { type ReactNode, useState } from 'react';
import { ErrorNote } from '../errors/ErrorNote.tsx';
import { TableWrap } from '../TableWrap.tsx';

/** What the list's form is open for: a new item, or one of the list's items. */
export type Editing<T> = { item: T | undefined };

export interface ListAndFormProps<T> {
  /** The heading's id (the section is labelled by it) and its text. */
  headingId: string;
  heading: ReactNode;
  /** `h1` for a page of its own, `h2` (the default) for a section of a page. */
  level?: 1 | 2;
  /** The section's class (`panel` on the Integrations page). */
  className?: string;
  /** What the list is, under the heading. */
  intro?: ReactNode;
  /** The button that opens the form for a new item; none for a person who may not create (a viewer). */
  newLabel?: string | undefined;
  /** The list's query: its items once read, whether it is still loading, and its failure. */
  items: readonly T[] | undefined;
  pending: boolean;
  error: unknown;
  /** Asks the list's query again after a failure ("Try again" beside the message). */
  onRetry?: () => void;
  loadingText: string;
  emptyText: ReactNode;
  /** The table's accessible name (its caption) and its header cells. */
  tableLabel: string;
  head: ReactNode;
  itemKey(item: T): string;
  /** One row; `edit()` opens the form for this item. */
  row(item: T, edit: () => void): ReactNode;
  /**
   * The form, for a new item (`item` undefined) or one of the list; `close()` after a save or a cancel. None
   * for a list whose rows are not edited (webhook deliveries, agent keys: their form stands in `before`/`after`).
   */
  form?(props: { item: T | undefined; close(): void }): ReactNode;
  /** What stands between the form and the list (a form always open, what a save answered, a sub-heading). */
  before?: ReactNode;
  /** What follows the list (a form always open below it, other sections of the page). */
  after?: ReactNode;
  /** Called when the form opens (for example to clear the last save's refusal). */
  onOpen?(): void;
  /** Refusals of the rows' own actions (end, archive, unlink …), shown above the list. */
  problems?: readonly unknown[];
}

/**
 * The portal's list-plus-form: a heading and what the list is, a "New …" button for those who may create,
 * the form (for a new item or the one being changed), each failure said as a person reads it
 * (errors/describe.ts) with "Try again" for a failed read, the loading and empty states, and the table. Drops,
 * campaigns, perks, event rules, chat groups, webhooks, agent keys and the team use it.
 */
export function ListAndForm<T>(props: ListAndFormProps<T>) {
  const [editing, setEditing] = useState<Editing<T> | undefined>();
  const open = (item: T | undefined) => {
    props.onOpen?.();
    setEditing({ item });
  };
  const close = () => setEditing(undefined);
  const Heading = props.level === 1 ? 'h1' : 'h2';
  return (
    <section aria-labelledby={props.headingId} {...(props.className ? { className: props.className } : {})}>
      <Heading id={props.headingId}>{props.heading}</Heading>
      {props.intro}
      {props.newLabel ? (
        <div>
          <button type="button" onClick={() => open(undefined)}>
            {props.newLabel}
          </button>
        </div>
      ) : null}
      {editing && props.form ? (
        <div key={editing.item === undefined ? 'new' : props.itemKey(editing.item)}>
          {props.form({ item: editing.item, close })}
        </div>
      ) : null}
      {props.before}
      {(props.problems ?? []).map((problem, index) => (problem ? <ErrorNote key={index} error={problem} /> : null))}
      {props.pending ? <p className="loading">{props.loadingText}</p> : null}
      <ErrorNote error={props.error} {...(props.onRetry ? { onRetry: props.onRetry } : {})} />
      {props.items ? (
        props.items.length === 0 ? (
          <p className="note">{props.emptyText}</p>
        ) : (
          <TableWrap label={props.tableLabel}>
            <table>
              <caption className="visually-hidden">{props.tableLabel}</caption>
              <thead>{props.head}</thead>
              <tbody>{props.items.map((item) => props.row(item, () => open(item)))}</tbody>
            </table>
          </TableWrap>
        )
      ) : null}
      {props.after}
    </section>
  );
}
