import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../api.ts';
import { describeError, fieldErrors, InvalidInput, messagesByPath, UnexpectedAnswer } from './describe.ts';
import { ErrorNote } from './ErrorNote.tsx';

afterEach(cleanup);

const validation = (errors: string[], field?: string) =>
  new ApiError('Invalid request', 400, 'VALIDATION_ERROR', { errors, ...(field ? { field } : {}) });

describe('describeError: the one error mapper', () => {
  it("keeps a refusal's own message and puts each `field: message` line on its field", () => {
    const described = describeError(
      validation(['cost: must be at least 1', 'milestones.1.days: must be more than the one before', 'bad body']),
    );
    expect(described.message).toBe('Invalid request');
    expect(described.fields).toEqual({ cost: 'must be at least 1', milestones: 'must be more than the one before' });
    expect(described.paths).toEqual({
      cost: 'must be at least 1',
      'milestones.1.days': 'must be more than the one before',
      '': 'bad body',
    });
  });

  it('puts a refusal that names one field (details.field) under that field', () => {
    const error = new ApiError('That e-mail is already on the team', 409, 'CONFLICT', { field: 'email' });
    expect(fieldErrors(error)).toEqual({ email: 'That e-mail is already on the team' });
    expect(messagesByPath(error)).toEqual({ email: 'That e-mail is already on the team', '': error.message });
  });

  it('the first message of a field wins; no error, no message', () => {
    expect(fieldErrors(validation(['name: is required', 'name: is too long']))).toEqual({ name: 'is required' });
    expect(fieldErrors(null)).toEqual({});
    expect(messagesByPath(null)).toEqual({});
  });

  it('says what to do when the server failed or could not be reached, never a bare status', () => {
    expect(describeError(new ApiError('Internal error', 500, 'INTERNAL', undefined)).message).toBe(
      'The server could not answer (500, INTERNAL): Internal error. Try again in a moment.',
    );
    expect(describeError(new TypeError('Failed to fetch')).message).toBe(
      'The portal could not reach the server. Check your connection and try again.',
    );
    expect(describeError('thrown text').message).toBe('Something went wrong. Reload the page and try again.');
  });

  it("maps the browser's own schema refusal (InvalidInput) like the server's", () => {
    const error = new InvalidInput(['definitions.0.name: is required']);
    expect(messagesByPath(error)).toEqual({ 'definitions.0.name': 'is required' });
    expect(fieldErrors(error)).toEqual({ definitions: 'is required' });
  });

  it('names the request and the mismatch of an answer the shared schema refused', () => {
    const error = new UnexpectedAnswer('GET /brands/0xabc/perks', ['perks.0.cost: expected number']);
    expect(describeError(error).message).toMatch(
      /^The server's answer to GET \/brands\/0xabc\/perks was not understood/,
    );
    expect(describeError(error).message).toMatch(/perks\.0\.cost: expected number/);
  });
});

describe('ErrorNote', () => {
  it('shows the described message as an alert, and nothing without an error', () => {
    const { rerender } = render(<ErrorNote error={null} />);
    expect(screen.queryByRole('alert')).toBeNull();
    rerender(<ErrorNote error={new ApiError('Not found', 404, 'NOT_FOUND', undefined)} />);
    expect(screen.getByRole('alert').textContent).toBe('Not found');
    rerender(<ErrorNote error={new TypeError('Failed to fetch')} />);
    expect(screen.getByRole('alert').textContent).toMatch(/could not reach the server/);
  });
});
