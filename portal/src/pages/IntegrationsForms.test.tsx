import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../api.ts';
import { AgentKeyForm, WebhookForm } from './IntegrationsPage.tsx';
import { InviteForm } from './TeamPage.tsx';

// The Integrations and Team forms that moved into the list-plus-form block: Save is disabled while a save is
// under way, and the server's refusal of a field shows under that field, tied to it for screen readers.

afterEach(cleanup);

const noop = () => {};
const endpoint = {
  brandId: '0xabc',
  url: 'https://hooks.example.com/pts',
  active: true,
  createdAt: '2026-12-01T10:00:00.000Z',
  updatedAt: '2026-12-01T10:00:00.000Z',
};

/** The message an input's aria-describedby points at. */
const describedText = (input: HTMLElement) =>
  document.getElementById(input.getAttribute('aria-describedby') ?? '')?.textContent;

describe('WebhookForm', () => {
  it('disables Save while the save is under way, and sends the URL and the secret choice', () => {
    const sent: unknown[] = [];
    const props = { current: endpoint, error: null, onSave: (input: unknown) => sent.push(input), testing: false };
    const { rerender } = render(<WebhookForm {...props} saving={true} onTest={noop} />);
    const save = screen.getByRole('button', { name: 'Save webhook' });
    expect(save.hasAttribute('disabled')).toBe(true);
    rerender(<WebhookForm {...props} saving={false} onTest={noop} />);
    expect(save.hasAttribute('disabled')).toBe(false);
    const url = screen.getByRole('textbox', { name: /Webhook URL/ });
    expect((url as HTMLInputElement).value).toBe(endpoint.url);
    fireEvent.change(url, { target: { value: ' https://new.example.com/hook ' } });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Issue a new signing secret' }));
    fireEvent.submit(screen.getByRole('form', { name: 'Webhook endpoint' }));
    expect(sent).toEqual([{ url: 'https://new.example.com/hook', rotateSecret: true }]);
  });

  it("shows a 400's message under the URL field, and a refusal naming no field once above the buttons", () => {
    const refusal = new ApiError('Invalid request', 400, 'VALIDATION_ERROR', {
      errors: ['url: must be an https URL that resolves to a public address'],
    });
    const { rerender } = render(
      <WebhookForm current={null} saving={false} error={refusal} onSave={noop} testing={false} onTest={noop} />,
    );
    const url = screen.getByRole('textbox', { name: /Webhook URL/ });
    expect(url.getAttribute('aria-invalid')).toBe('true');
    expect(describedText(url)).toBe('must be an https URL that resolves to a public address');
    expect(screen.queryByRole('alert')).toBeNull();
    // No endpoint yet: nothing to test, no secret to replace.
    expect(screen.queryByRole('button', { name: 'Send a test' })).toBeNull();
    expect(screen.queryByRole('checkbox')).toBeNull();

    const general = new ApiError('Webhooks are not available on this tier', 403, 'FORBIDDEN', undefined);
    rerender(<WebhookForm current={null} saving={false} error={general} onSave={noop} testing={false} onTest={noop} />);
    expect(screen.getByRole('alert').textContent).toBe('Webhooks are not available on this tier');
    expect(screen.getByRole('textbox', { name: /Webhook URL/ }).getAttribute('aria-invalid')).toBeNull();
  });

  it('sends a test when an endpoint is set, and not twice while one is under way', () => {
    let tests = 0;
    const { rerender } = render(
      <WebhookForm
        current={endpoint}
        saving={false}
        error={null}
        onSave={noop}
        testing={false}
        onTest={() => tests++}
      />,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Send a test' }));
    expect(tests).toBe(1);
    rerender(
      <WebhookForm
        current={endpoint}
        saving={false}
        error={null}
        onSave={noop}
        testing={true}
        onTest={() => tests++}
      />,
    );
    expect(screen.getByRole('button', { name: 'Send a test' }).hasAttribute('disabled')).toBe(true);
  });
});

describe('AgentKeyForm', () => {
  it('disables Create while pending, shows the name refusal under the field, and sends name and scope', () => {
    const sent: unknown[] = [];
    const refusal = new ApiError('Invalid request', 400, 'VALIDATION_ERROR', { errors: ['name: is required'] });
    const { rerender } = render(<AgentKeyForm saving={true} error={null} onSave={(input) => sent.push(input)} />);
    const create = screen.getByRole('button', { name: 'Create key' });
    expect(create.hasAttribute('disabled')).toBe(true);
    rerender(<AgentKeyForm saving={false} error={refusal} onSave={(input) => sent.push(input)} />);
    expect(create.hasAttribute('disabled')).toBe(false);
    const name = screen.getByRole('textbox', { name: /Key name/ });
    expect(name.getAttribute('aria-invalid')).toBe('true');
    expect(describedText(name)).toBe('is required');

    fireEvent.change(name, { target: { value: 'Reporting agent' } });
    fireEvent.click(screen.getByRole('checkbox', { name: /May change the program/ }));
    fireEvent.submit(screen.getByRole('form', { name: 'Create an agent key' }));
    expect(sent).toEqual([{ name: 'Reporting agent', canManageProgram: true }]);
  });
});

describe('InviteForm', () => {
  it('disables Send while pending, shows the e-mail refusal under the field, and the link once sent', () => {
    const refusal = new ApiError('Invalid request', 400, 'VALIDATION_ERROR', { errors: ['email: Invalid email'] });
    const { rerender } = render(<InviteForm saving={true} error={null} sent={undefined} onSave={noop} />);
    const send = screen.getByRole('button', { name: 'Send invite' });
    expect(send.hasAttribute('disabled')).toBe(true);
    rerender(<InviteForm saving={false} error={refusal} sent={undefined} onSave={noop} />);
    const email = screen.getByRole('textbox', { name: /E-mail/ });
    expect(email.getAttribute('aria-invalid')).toBe('true');
    expect(describedText(email)).toBe('Invalid email');

    const sent = { email: 'new@shop.example.com', inviteUrl: 'http://127.0.0.1/portal/invite#token' };
    rerender(<InviteForm saving={false} error={null} sent={sent} onSave={noop} />);
    const status = within(screen.getByRole('form', { name: 'Invite a teammate' })).getByRole('status');
    expect(status.textContent).toContain('Invited new@shop.example.com.');
    expect(screen.getByTestId('invite-url').textContent).toBe(sent.inviteUrl);
  });
});
