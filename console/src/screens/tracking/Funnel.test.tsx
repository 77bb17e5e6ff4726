import { render, screen } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { requests, stubFetch } from '../../test/fetch';
import { parseHash } from '../../router';
import { session, workspace } from '../../session';

const range = { from: '2026-10-28', to: '2026-11-26' };
const steps = (...n: number[]) => ['page_view', 'install', 'trial_started', 'trial_converted', 'paid'].map((name, i) => ({ name, acquisitions: n[i] }));

async function show(hash: string, groups: object[]) {
  session.value = { user: { id: 'u', email: 'a@b.example', name: 'A' }, csrfToken: 't', workspaces: [{ id: 'w', slug: 'second', name: 'Second', role: 'member' }] };
  workspace.value = 'second';
  stubFetch({ 'GET /api/admin/sources': { body: { sources: [] } },
    'GET /api/v1/tracking/funnel': { body: { range, source: 'tracking_funnel', funnel: { dimension: 'utm_campaign', from: '2026-10-28T00:00:00Z',
      to: '2026-11-27T00:00:00Z', windowSeconds: 2592000, groups } } } });
  const { Funnel } = await import('../Funnel');
  render(<Funnel route={parseHash(hash)} filters={range} />);
}

const cells = (t: Element) => [...t.querySelectorAll('tbody tr')].map((r) => [...r.children].map((c) => c.textContent));

describe('Funnel', () => {
  it('shows each step, its conversion from the step before and the drop-off; qualified beside the journey', async () => {
    await show('#/funnel?groupBy=utm_campaign&window=90', [{ key: 'spring', steps: steps(200, 50, 20, 5, 4), qualified: 7 }, { key: '', steps: steps(100, 0, 0, 0, 0), qualified: 0 }]);
    const groups = await screen.findAllByTestId('funnel-group');
    expect(groups[0].querySelector('caption')?.textContent).toBe('First touch: UTM campaign: spring');
    expect(cells(groups[0])).toEqual([
      ['Page view (first seen)', '200', '—', '—', '100.0%'],
      ['Install', '50', '25.0%', '150', '25.0%'],
      ['Trial started', '20', '40.0%', '30', '10.0%'],
      ['Trial converted', '5', '25.0%', '15', '2.5%'],
      ['Paid', '4', '80.0%', '1', '2.0%'],
      ['Qualified (beside the journey)', '7', '—', '—', '3.5%'],
    ]);
    expect(groups[1].querySelector('caption')?.textContent).toBe('First touch: UTM campaign: (no UTM campaign)');
    expect(cells(groups[1])[2]).toEqual(['Trial started', '0', '—', '0', '0.0%']);
    expect(cells(screen.getByTestId('funnel-total'))[1]).toEqual(['Install', '50', '16.7%', '250', '16.7%']);
    expect(screen.getByTestId('funnel-notes').textContent).toContain('never counts as a conversion');
    const q = requests.filter((r) => new URL(r.url).pathname === '/api/v1/tracking/funnel').map((r) => Object.fromEntries(new URL(r.url).searchParams));
    expect(q[0]).toEqual({ ...range, groupBy: 'utm_campaign', windowDays: '90' });
  });

  it('says what to do when no browser was first seen in the range', async () => {
    await show('#/funnel', []);
    expect((await screen.findByTestId('tracking-empty')).textContent).toContain('Create one');
  });
});
