import { fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { beforeEach, describe, expect, it } from 'vitest';
import { useRoute } from '../../router';
import { requests, stubFetch } from '../../test/fetch';
import { as } from './as';
import { Audit } from './Audit';

const entry = (action: string, actor: string, i: number) => ({ at: `2026-11-26T10:0${i}:00Z`, workspaceId: 'w', actor, action, targetType: 'api_key',
  targetId: `k${i}`, details: { name: `key ${i}` } });

function Screen() {
  const route = useRoute();
  return <Audit route={route} />;
}

const audits = () => requests.filter((r) => new URL(r.url).pathname === '/api/admin/audit').map((r) => Object.fromEntries(new URL(r.url).searchParams));

beforeEach(() => { location.hash = '#/settings/audit'; });

describe('Audit log', () => {
  it('sends the filters to the API, names the actors, and pages with the cursor', async () => {
    as('admin');
    stubFetch({
      'GET /api/admin/members': { body: { members: [{ userId: 'u1', email: 'o@demo.example', name: 'Olga', role: 'owner', createdAt: '2026-11-01T00:00:00Z' }] } },
      'GET /api/admin/keys': { body: { keys: [{ id: 'k0', workspaceId: 'w', name: 'ops', scope: 'admin', createdBy: 'x', createdAt: '2026-11-01T00:00:00Z', lastUsedAt: null }] } },
      'GET /api/admin/audit': (r) => new URL(r.url).searchParams.get('cursor')
        ? { body: { entries: [entry('api_key.create', 'key:k0', 1)], nextCursor: null } }
        : { body: { entries: [entry('api_key.revoke', 'user:u1', 2)], nextCursor: 'c2' } },
    });
    render(<Screen />);
    const table = await screen.findByTestId('audit');
    await waitFor(() => expect(table.textContent).toContain('Olga (o@demo.example)'));
    fireEvent.input(screen.getByLabelText(/^Action/), { target: { value: 'api_key' } });
    fireEvent.change(screen.getByLabelText(/^Who/), { target: { value: 'user:u1' } });
    fireEvent.input(screen.getByLabelText(/^From/), { target: { value: '2026-11-01' } });
    fireEvent.click(screen.getByRole('button', { name: 'Apply' }));
    await waitFor(() => expect(audits().at(-1)).toEqual({ limit: '25', action: 'api_key', actor: 'user:u1', from: '2026-11-01' }));
    expect(location.hash).toBe('#/settings/audit?action=api_key&actor=user%3Au1&from=2026-11-01');
    fireEvent.click(await screen.findByRole('button', { name: 'Older' }));
    await waitFor(() => expect(screen.getByTestId('audit').textContent).toContain('key “ops”'));
    expect(audits().at(-1)).toMatchObject({ cursor: 'c2', action: 'api_key' });
    expect((screen.getByRole('button', { name: 'Older' }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByRole('button', { name: 'Newer' }));
    await waitFor(() => expect(screen.getByTestId('audit').textContent).toContain('api_key.revoke'));
  });

  it('tells a member the log is for owners and admins, without asking the API', async () => {
    as('member');
    stubFetch({});
    render(<Screen />);
    screen.getByText(/for owners and admins/);
    expect(requests).toHaveLength(0);
  });
});
