import { QueryClient, QueryClientProvider, useMutation } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { type FormEvent, type ReactNode, useState } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../api.ts';
import { fieldErrors } from '../errors/describe.ts';
import { ListAndForm, type ListAndFormProps } from './ListAndForm.tsx';

afterEach(cleanup);

interface Item {
  id: string;
  name: string;
}
const ITEMS: Item[] = [
  { id: 'a', name: 'Spring drop' },
  { id: 'b', name: 'Summer drop' },
];

function List(props: Partial<ListAndFormProps<Item>>) {
  return (
    <ListAndForm<Item>
      headingId="things-heading"
      heading="Things"
      newLabel="New thing"
      items={ITEMS}
      pending={false}
      error={null}
      loadingText="Loading the things…"
      emptyText="No thing yet."
      tableLabel="All things"
      itemKey={(item) => item.id}
      head={
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Actions</th>
        </tr>
      }
      row={(item, edit) => (
        <tr key={item.id}>
          <th scope="row">{item.name}</th>
          <td>
            <button type="button" onClick={edit} aria-label={`Edit ${item.name}`}>
              Edit
            </button>
          </td>
        </tr>
      )}
      form={({ item, close }) => (
        <form aria-label={item ? `Edit ${item.name}` : 'New thing'}>
          <button type="button" onClick={close}>
            Cancel
          </button>
        </form>
      )}
      {...props}
    />
  );
}

describe('ListAndForm', () => {
  it('lists the items in a named table under its heading', () => {
    render(<List />);
    const section = screen.getByRole('region', { name: 'Things' });
    const table = within(section).getByRole('table', { name: 'All things' });
    expect(
      within(table)
        .getAllByRole('rowheader')
        .map((cell) => cell.textContent),
    ).toEqual(['Spring drop', 'Summer drop']);
  });

  it('says when it loads, when the list is empty, and why it failed (as a person reads it)', () => {
    const { rerender } = render(<List items={undefined} pending />);
    expect(screen.getByText('Loading the things…')).toBeTruthy();
    rerender(<List items={[]} />);
    expect(screen.getByText('No thing yet.')).toBeTruthy();
    expect(screen.queryByRole('table')).toBeNull();
    rerender(<List items={undefined} error={new TypeError('Failed to fetch')} />);
    expect(screen.getByRole('alert').textContent).toMatch(/could not reach the server/);
  });

  it('opens the form for a new item or for the row, clears the last refusal on opening, and closes it', () => {
    let opened = 0;
    render(<List onOpen={() => opened++} />);
    fireEvent.click(screen.getByRole('button', { name: 'New thing' }));
    expect(screen.getByRole('form', { name: 'New thing' })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Edit Summer drop' }));
    expect(screen.queryByRole('form', { name: 'New thing' })).toBeNull();
    expect(screen.getByRole('form', { name: 'Edit Summer drop' })).toBeTruthy();
    expect(opened).toBe(2);
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('form')).toBeNull();
  });

  it('offers no "New" button to a person who may not create', () => {
    render(<List newLabel={undefined} />);
    expect(screen.queryByRole('button', { name: 'New thing' })).toBeNull();
  });

  it('shows what stands before and after the list, and offers "Try again" for a failed read', () => {
    let retried = 0;
    const { rerender } = render(
      <List
        className="panel"
        form={undefined}
        before={<h3>Latest deliveries</h3>}
        after={<form aria-label="Create a thing" />}
        onRetry={() => retried++}
      />,
    );
    const section = screen.getByRole('region', { name: 'Things' });
    expect(section.className).toBe('panel');
    const order = [...section.querySelectorAll('h3, table, form')].map((element) => element.tagName);
    expect(order).toEqual(['H3', 'TABLE', 'FORM']);
    // A list whose rows are not edited: its "New" button opens nothing.
    fireEvent.click(screen.getByRole('button', { name: 'New thing' }));
    expect(screen.queryByRole('form', { name: 'New thing' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Try again' })).toBeNull();

    rerender(<List items={undefined} error={new TypeError('Failed to fetch')} onRetry={() => retried++} />);
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(retried).toBe(1);
  });

  it("shows the refusals of the rows' own actions", () => {
    render(<List problems={[null, new ApiError('The drop has ended', 409, 'CONFLICT', undefined)]} />);
    expect(screen.getByRole('alert').textContent).toBe('The drop has ended');
  });
});

/** A deferred answer: the test settles the save when it wants, so the pending state can be looked at. */
function deferred() {
  let settle: { resolve(): void; reject(error: unknown): void } = { resolve() {}, reject() {} };
  const promise = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  return { promise, ...settle };
}

/** A list whose form saves through a real mutation (TanStack Query), as the drops and campaigns do. */
function SavingList({ save }: { save: () => Promise<void> }) {
  const saving = useMutation({ mutationFn: save });
  return (
    <List
      onOpen={() => saving.reset()}
      form={({ close }) => (
        <NameForm
          saving={saving.isPending}
          error={saving.error}
          onSave={() => saving.mutate(undefined, { onSuccess: close })}
        />
      )}
    />
  );
}

function NameForm(props: { saving: boolean; error: Error | null; onSave(): void }) {
  const [name, setName] = useState('');
  const errors = fieldErrors(props.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onSave();
  };
  return (
    <form aria-label="New thing" onSubmit={submit}>
      <label>
        Name
        <input
          value={name}
          onChange={(event) => setName(event.target.value)}
          {...(errors.name ? { 'aria-invalid': true, 'aria-describedby': 'name-error' } : {})}
        />
        {errors.name ? <span id="name-error">{errors.name}</span> : null}
      </label>
      <button type="submit" disabled={props.saving}>
        Save
      </button>
    </form>
  );
}

const withQueries = (node: ReactNode) =>
  render(<QueryClientProvider client={new QueryClient()}>{node}</QueryClientProvider>);

describe('a list-plus-form that saves', () => {
  it('disables Save while the save is under way, shows the field message of a refusal, and closes on success', async () => {
    const attempts = [deferred(), deferred()];
    let call = 0;
    withQueries(<SavingList save={() => attempts[call++]!.promise} />);
    fireEvent.click(screen.getByRole('button', { name: 'New thing' }));
    const form = screen.getByRole('form', { name: 'New thing' });
    const save = within(form).getByRole('button', { name: 'Save' });
    fireEvent.submit(form);
    await screen.findByRole('button', { name: 'Save' });
    await expect.poll(() => save.hasAttribute('disabled')).toBe(true);

    attempts[0]!.reject(new ApiError('Invalid request', 400, 'VALIDATION_ERROR', { errors: ['name: is required'] }));
    const input = await screen.findByRole('textbox', { name: /Name/ });
    await expect.poll(() => input.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByText('is required').id).toBe(input.getAttribute('aria-describedby'));
    expect(save.hasAttribute('disabled')).toBe(false);

    fireEvent.submit(form);
    await expect.poll(() => save.hasAttribute('disabled')).toBe(true);
    attempts[1]!.resolve();
    await expect.poll(() => screen.queryByRole('form')).toBeNull();
  });
});
