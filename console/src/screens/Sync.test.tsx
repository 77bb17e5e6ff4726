import { render, screen } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../test/fetch';
import { session, workspace } from '../session';
import { Sync } from './Sync';

const run = { runId: 'r1', appId: 'demo-upsell', trigger: 'schedule', status: 'succeeded', startedAt: '2026-11-26T10:00:00Z',
  finishedAt: '2026-11-26T10:01:00Z', eventsCount: 10, transactionsCount: 20, coverageFrom: null, coverageThrough: null, truncated: false, error: '' };

function as(role: 'owner' | 'admin' | 'member') {
  session.value = { user: { id: 'u', email: 'a@b.example', name: 'A' }, csrfToken: 't', workspaces: [{ id: 'w', slug: 'demo', name: 'Demo', role }] };
  workspace.value = 'demo';
}

describe('Sync', () => {
  it('offers starting a sync to owners and admins only', async () => {
    stubFetch({ 'GET /api/admin/sync-runs': { body: { runs: [run] } } });
    for (const role of ['owner', 'admin', 'member'] as const) {
      as(role);
      const { unmount } = render(<Sync />);
      await screen.findByTestId('sync-runs');
      expect(screen.queryByRole('button', { name: /Start a sync/ }) !== null).toBe(role !== 'member');
      unmount();
    }
  });
});
