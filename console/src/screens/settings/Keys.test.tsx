import { fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { beforeEach, describe, expect, it } from 'vitest';
import { requests, stubFetch } from '../../test/fetch';
import { as } from './as';
import { Keys } from './Keys';
import { justCreatedKey } from './state';

const key = (id: string, name: string, extra: Record<string, unknown> = {}) => ({ id, workspaceId: 'w', name, scope: 'read', createdBy: 'user:u',
  createdAt: '2026-11-20T10:00:00Z', lastUsedAt: null, ...extra });
const list = [key('k1', 'reporting', { lastUsedAt: '2026-11-26T09:15:00Z' }), key('k2', 'old', { revokedAt: '2026-11-21T10:00:00Z' })];

beforeEach(() => { justCreatedKey.value = null; });

describe('Keys', () => {
  it('lists keys with creation, last use (or never) and state', async () => {
    as('owner');
    stubFetch({ 'GET /api/admin/keys': { body: { keys: [...list, key('k3', 'unused')] } } });
    render(<Keys />);
    const rows = [...(await screen.findByTestId('keys')).querySelectorAll('tbody tr')].map((r) => r.textContent);
    expect(rows[0]).toContain('Nov 26, 2026, 9:15 AM UTC');
    expect(rows[1]).toContain('revoked Nov 21, 2026');
    expect(rows[2]).toContain('never');
    expect(screen.getAllByRole('button', { name: /^Revoke/ })).toHaveLength(2); // not on the revoked key
  });

  it('shows a new key once with a copy button and says it will not be shown again', async () => {
    as('admin');
    stubFetch({ 'GET /api/admin/keys': { body: { keys: [] } },
      'POST /api/admin/keys': { status: 201, body: { key: key('k9', 'assistant'), value: 'revtrack_sk_abc', note: '' } } });
    render(<Keys />);
    await screen.findByText(/No keys yet/);
    fireEvent.input(screen.getByLabelText(/Key name/), { target: { value: 'assistant' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create key' }));
    expect(((await screen.findByTestId('new-key-value')) as HTMLInputElement).value).toBe('revtrack_sk_abc');
    expect(screen.getByTestId('new-key').textContent).toContain('you will not see this again');
    expect(screen.getByRole('button', { name: 'Copy the new key' })).toBeTruthy();
    const sent = requests.find((r) => r.method === 'POST')!;
    expect(await sent.clone().json()).toEqual({ name: 'assistant', scope: 'read' });
    expect(sent.headers.get('X-CSRF-Token')).toBe(null); // the client middleware adds it in the app (auth.csrfToken unset here)
  });

  it('puts the refusal of an admin-scoped key next to the scope field', async () => {
    as('admin');
    const msg = 'an admin-scoped key can do everything an owner can: creating one needs the owner role; create a read-scoped key';
    stubFetch({ 'GET /api/admin/keys': { body: { keys: list } }, 'POST /api/admin/keys': { status: 403, body: { error: 'forbidden', message: msg } } });
    render(<Keys />);
    await screen.findByTestId('keys');
    fireEvent.input(screen.getByLabelText(/Key name/), { target: { value: 'ops' } });
    fireEvent.change(screen.getByLabelText(/^Scope/), { target: { value: 'admin' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create key' }));
    const err = await screen.findByText(msg);
    expect(err.id).toBe('key-scope-error');
    expect(screen.getByLabelText(/^Scope/).getAttribute('aria-describedby')).toBe('key-scope-error');
  });

  it('revokes only after the confirmation', async () => {
    as('owner');
    stubFetch({ 'GET /api/admin/keys': { body: { keys: list } },
      'POST /api/admin/keys/k1/revoke': { body: { key: key('k1', 'reporting', { revokedAt: '2026-11-26T10:00:00Z' }) } } });
    render(<Keys />);
    await screen.findByTestId('keys');
    fireEvent.click(screen.getByRole('button', { name: 'Revoke reporting' }));
    const dialog = await screen.findByRole('alertdialog');
    expect(dialog.textContent).toContain('refused (401) at once');
    expect(requests.some((r) => r.method === 'POST')).toBe(false);
    fireEvent.click(screen.getByRole('button', { name: 'Revoke the key' }));
    await screen.findByText(/is revoked/);
    expect(requests.filter((r) => r.method === 'POST').map((r) => new URL(r.url).pathname)).toEqual(['/api/admin/keys/k1/revoke']);
  });

  it('shows a member the list without any action', async () => {
    as('member');
    stubFetch({ 'GET /api/admin/keys': { body: { keys: list } } });
    render(<Keys />);
    await screen.findByTestId('keys');
    expect(screen.queryByRole('form', { name: 'Create a key' })).toBe(null);
    expect(screen.queryAllByRole('button')).toHaveLength(0);
    await waitFor(() => expect(requests).toHaveLength(1));
  });
});
