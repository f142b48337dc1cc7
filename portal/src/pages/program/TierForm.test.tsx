import type { TiersResponse } from '@pts/shared/schemas/tiers';
import { setTiersRequestSchema } from '@pts/shared/schemas/tiers';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../api.ts';
import { TierForm } from './TiersSection.tsx';
import { validated } from './validation.tsx';

afterEach(cleanup);

const noop = () => {};
const NONE: TiersResponse = {
  success: true,
  brandId: '0x0000000000000000000000000000000000000001',
  basis: null,
  period: null,
  graceDays: 0,
  currency: 'USD',
  tiers: null,
};

/** What the section does with a save: the shared schema first, its refusal shown as the form's error. */
function refusalOf(table: unknown): Error {
  try {
    validated(setTiersRequestSchema, table);
  } catch (error) {
    return error as Error;
  }
  throw new Error('the schema accepted the table');
}

describe('TierForm', () => {
  it('starts a brand without tiers from two tiers and sends what was typed, whole pts as numbers', () => {
    const sent: unknown[] = [];
    render(<TierForm table={NONE} saving={false} error={null} onCancel={noop} onSave={(t) => sent.push(t)} />);
    fireEvent.change(screen.getByRole('combobox', { name: /Over/ }), { target: { value: 'rolling_365' } });
    fireEvent.change(screen.getByRole('textbox', { name: 'Tier 2: name' }), { target: { value: 'Gold' } });
    fireEvent.change(screen.getByRole('textbox', { name: /Tier 2: from/ }), { target: { value: '1000' } });
    fireEvent.change(screen.getByRole('spinbutton', { name: /Tier 2: multiplier/ }), { target: { value: '2' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add tier' }));
    expect(screen.getAllByRole('textbox', { name: /: name$/ })).toHaveLength(3);
    fireEvent.click(screen.getByRole('button', { name: 'Remove tier 3' }));
    fireEvent.submit(screen.getByRole('form', { name: 'VIP tiers' }));
    expect(sent).toEqual([
      {
        basis: 'earned',
        period: 'rolling_365',
        graceDays: 0,
        tiers: [
          { name: 'Bronze', threshold: 0, multiplier: 1, entryReward: 0 },
          { name: 'Gold', threshold: 1000, multiplier: 2, entryReward: 50 },
        ],
      },
    ]);
    // 2 tiers is the least: neither can be removed.
    expect(screen.getByRole('button', { name: 'Remove tier 1' }).hasAttribute('disabled')).toBe(true);
  });

  it("shows the shared schema's messages under the fields they name, tied to them for screen readers", () => {
    const refusal = refusalOf({
      basis: 'earned',
      period: 'lifetime',
      graceDays: 400,
      tiers: [
        { name: 'Bronze', threshold: 0, multiplier: 1, entryReward: 0 },
        { name: '', threshold: 300, multiplier: 1.255, entryReward: 0 },
      ],
    });
    render(<TierForm table={NONE} saving={false} error={refusal} onCancel={noop} onSave={noop} />);
    const multiplier = screen.getByRole('spinbutton', { name: /Tier 2: multiplier/ });
    expect(multiplier.getAttribute('aria-invalid')).toBe('true');
    expect(document.getElementById(multiplier.getAttribute('aria-describedby') ?? '')?.textContent).toBe(
      'must have at most 2 decimals (1.25, not 1.255)',
    );
    const name = screen.getByRole('textbox', { name: /^Tier 2: name/ });
    expect(document.getElementById(name.getAttribute('aria-describedby') ?? '')?.textContent).toBe(
      'must name the tier',
    );
    expect(screen.getByRole('spinbutton', { name: /Grace in days/ }).getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByRole('alert').textContent).toBe('Some tiers need fixing (see the messages above).');
  });

  it("shows the server's refusal under the threshold it names (thresholds must rise)", () => {
    const refusal = new ApiError('tiers.1.threshold must be above the previous tier’s', 400, 'VALIDATION_ERROR', {
      field: 'tiers.1.threshold',
    });
    render(<TierForm table={NONE} saving={false} error={refusal} onCancel={noop} onSave={noop} />);
    const threshold = screen.getByRole('textbox', { name: /Tier 2: from/ });
    expect(threshold.getAttribute('aria-invalid')).toBe('true');
    expect(document.getElementById(threshold.getAttribute('aria-describedby') ?? '')?.textContent).toMatch(
      /must be above/,
    );
  });
});
