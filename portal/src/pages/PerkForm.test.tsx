import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../api.ts';
import { PerkForm } from './PerkForm.tsx';

afterEach(cleanup);

const noop = () => {};

describe('PerkForm', () => {
  it("shows each of the server's field messages under its field, tied to it for screen readers", () => {
    const refusal = new ApiError('Invalid request', 400, 'VALIDATION_ERROR', {
      errors: ['cost: Too small: expected number to be >=1', 'name: Too small: expected string to have >=1 characters'],
    });
    render(<PerkForm perk={undefined} saving={false} error={refusal} onCancel={noop} onSave={noop} />);
    const cost = screen.getByRole('spinbutton', { name: /Cost \(pts\)/ });
    expect(cost.getAttribute('aria-invalid')).toBe('true');
    expect(document.getElementById(cost.getAttribute('aria-describedby') ?? '')?.textContent).toBe(
      'Too small: expected number to be >=1',
    );
    const name = screen.getByRole('textbox', { name: /^Name/ });
    expect(name.getAttribute('aria-invalid')).toBe('true');
    // A refusal that names fields is said at the fields, not once more above the buttons.
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('says a refusal that names no field once, above the buttons', () => {
    const refusal = new ApiError('Perk window must open before it closes', 400, 'BAD_REQUEST', undefined);
    render(<PerkForm perk={undefined} saving={false} error={refusal} onCancel={noop} onSave={noop} />);
    expect(screen.getByRole('alert').textContent).toBe('Perk window must open before it closes');
  });

  it('disables its submit button while the save is under way, and sends what was typed', () => {
    const sent: unknown[] = [];
    const { rerender } = render(
      <PerkForm perk={undefined} saving={true} error={null} onCancel={noop} onSave={(s) => sent.push(s)} />,
    );
    const submit = screen.getByRole('button', { name: 'Saving… (waiting for the chain)' });
    expect(submit.hasAttribute('disabled')).toBe(true);
    rerender(<PerkForm perk={undefined} saving={false} error={null} onCancel={noop} onSave={(s) => sent.push(s)} />);
    expect(submit.hasAttribute('disabled')).toBe(false);
    expect(submit.textContent).toBe('Save perk');
    fireEvent.change(screen.getByRole('textbox', { name: /^Name/ }), { target: { value: 'Free coffee' } });
    fireEvent.change(screen.getByRole('spinbutton', { name: /Cost \(pts\)/ }), { target: { value: '250' } });
    fireEvent.submit(screen.getByRole('form', { name: 'New perk' }));
    expect(sent).toMatchObject([{ name: 'Free coffee', cost: 250, maxSupply: null, maxPerUser: 1 }]);
  });
});
