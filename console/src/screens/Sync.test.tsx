import { render, screen } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../test/fetch';
import { session, workspace } from '../session';
import { Sync } from './Sync';

const run: Record<string, unknown> = { runId: 'r1', appId: 'demo-upsell', trigger: 'schedule', status: 'succeeded', startedAt: '2026-11-26T10:00:00Z',
  finishedAt: '2026-11-26T10:01:00Z', eventsCount: 10, transactionsCount: 20, coverageFrom: null, coverageThrough: null, truncated: false, error: '', progress: null };

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

describe('Sync progress', () => {
  it('shows a running sync\'s live progress: records loaded, window reached, time left', async () => {
    const running = { ...run, runId: 'r2', status: 'running', finishedAt: null, progress: { updatedAt: '2026-11-26T10:00:05Z', eventsCount: 1200,
      transactionsCount: 3400, pages: 17, walk: { step: 1, steps: 2, stream: 'transactions', direction: 'backward',
        from: '2026-11-26T10:00:00Z', reachedAt: '2026-03-01T00:00:00Z', target: '2025-05-01T00:00:00Z', estimatedSecondsLeft: 41.2 } } };
    stubFetch({ 'GET /api/admin/sync-runs': { body: { runs: [running] } } });
    as('member');
    render(<Sync />);
    const p = await screen.findByTestId('sync-progress');
    expect(p.textContent).toContain('1,200 events and 3,400 transactions loaded (17 pages)');
    expect(p.textContent).toContain('step 1 of 2: transactions backward, reached Mar 1, 2026, 12:00 AM UTC of May 1, 2025, 12:00 AM UTC');
    expect(p.textContent).toContain('about 42 s left');
  });
});
