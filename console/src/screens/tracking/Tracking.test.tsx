import { fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { beforeEach, describe, expect, it } from 'vitest';
import { requests, stubFetch } from '../../test/fetch';
import { parseHash } from '../../router';
import { session, workspace } from '../../session';

const range = { from: '2026-10-28', to: '2026-11-26' };
const source = { id: 'src_1', workspaceId: 'w', appId: 'demo-upsell', name: 'Install page', allowedOrigins: ['https://a.example'], enabled: true,
  publicKey: 'tracker_pk_x', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' };
const pv = { evidence: 'Browser', eventId: 'e1', sourceId: 'src_1', name: 'page_view', occurredAt: '2026-11-20T10:00:00Z', acquisitionId: 'acq-1',
  sessionId: 's1', path: '/pricing' };
const paid = { evidence: 'Server', eventId: 'e2', sourceId: 'src_1', name: 'paid', occurredAt: '2026-11-21T10:00:00Z', acquisitionId: 'acq-1',
  acquisitionSourceId: 'src_1', acquisitionResolvedBy: 'shop_link', shop: 'a.myshopify.com', amountCents: 4900, currency: 'USD' };
const ident = { ...paid, eventId: 'e3', name: 'identified', acquisitionResolvedBy: 'event', amountCents: undefined, currency: undefined };

function member() {
  session.value = { user: { id: 'u', email: 'a@b.example', name: 'A' }, csrfToken: 't', workspaces: [{ id: 'w', slug: 'second', name: 'Second', role: 'member' }] };
  workspace.value = 'second';
}

async function show(hash: string) {
  const { Tracking } = await import('../Tracking');
  render(<Tracking route={parseHash(hash)} filters={range} />);
}

const query = (path: string) => requests.filter((r) => new URL(r.url).pathname === path).map((r) => Object.fromEntries(new URL(r.url).searchParams));

describe('Tracking events', () => {
  beforeEach(() => member());

  it('shows each event with its evidence badge and sends the fragment\'s filters to the API', async () => {
    stubFetch({ 'GET /api/admin/sources': { body: { sources: [source] } },
      'GET /api/v1/tracking/events': { body: { range, events: [paid, ident, pv], nextCursor: null, source: 'tracking_events' } } });
    await show('#/tracking?name=paid&acq=acq-1&shop=a.myshopify.com&source=src_1');
    const table = await screen.findByTestId('tracking-events');
    const rows = [...table.querySelectorAll('tbody tr')];
    expect(rows.map((r) => r.getAttribute('data-evidence'))).toEqual(['Server', 'Server', 'Browser']);
    expect(rows[0].textContent).toContain('$49.00');
    expect(rows[0].textContent).toContain('attributed through the shop\'s link');
    expect(rows[1].textContent).toContain('not a conversion');
    expect(rows[2].textContent).toContain('Install page (demo-upsell)');
    expect(rows[2].querySelector('a')?.getAttribute('href')).toBe('#/tracking/acquisitions/acq-1?from=2026-10-28&to=2026-11-26&source=src_1');
    expect(query('/api/v1/tracking/events')[0]).toEqual({ ...range, limit: '50', name: 'paid', acquisitionId: 'acq-1', shop: 'a.myshopify.com', sourceId: 'src_1' });
    expect(screen.getByLabelText('Event name')).toHaveProperty('value', 'paid');
  });

  it('pages with the API\'s nextCursor, and back', async () => {
    stubFetch({ 'GET /api/admin/sources': { body: { sources: [] } },
      'GET /api/v1/tracking/events': (r) => ({ body: new URL(r.url).searchParams.get('cursor')
        ? { range, events: [pv], nextCursor: null, source: 'tracking_events' }
        : { range, events: [paid], nextCursor: 'CUR1', source: 'tracking_events' } }) });
    await show('#/tracking');
    await screen.findByText('$49.00', { exact: false });
    fireEvent.click(screen.getByRole('button', { name: 'Older events' }));
    await screen.findByText('/pricing', { exact: false });
    expect(query('/api/v1/tracking/events').at(-1)?.cursor).toBe('CUR1');
    expect(screen.getByRole('button', { name: 'Older events' })).toHaveProperty('disabled', true);
    fireEvent.click(screen.getByRole('button', { name: 'Newer events' }));
    await screen.findByText('$49.00', { exact: false });
  });

  it('says what to check when nothing arrived, and what to do when filters match nothing', async () => {
    stubFetch({ 'GET /api/admin/sources': { body: { sources: [source] } },
      'GET /api/v1/tracking/events': { body: { range, events: [], nextCursor: null, source: 'tracking_events' } } });
    await show('#/tracking');
    const empty = await screen.findByTestId('tracking-empty');
    expect(empty.textContent).toContain('No page view');
    expect(empty.textContent).toContain('Origin not allowed');
    expect(empty.textContent).toContain('public key');
  });

  it('shows the API\'s refusal of a filter', async () => {
    stubFetch({ 'GET /api/admin/sources': { body: { sources: [] } },
      'GET /api/v1/tracking/events': { status: 404, body: { error: 'not_found', message: 'not found in this workspace: tracking source "nope"' } } });
    await show('#/tracking?source=nope');
    expect((await screen.findByRole('alert')).textContent).toContain('tracking source "nope"');
    expect(screen.getByTestId('event-filters-problem').textContent).toContain('tracking source "nope"');
  });
});

describe('Journey', () => {
  beforeEach(() => member());

  it('shows the first touch, the shop joined, the sessions and every event', async () => {
    stubFetch({ 'GET /api/admin/sources': { body: { sources: [source] } },
      'GET /api/v1/tracking/acquisitions/acq-1': { body: { source: 'tracking_journey', journey: { acquisitionId: 'acq-1', sourceId: 'src_1',
        firstTouch: { firstSeenAt: '2026-11-20T10:00:00Z', lastSeenAt: '2026-11-20T10:05:00Z', pageViews: 2, utmCampaign: 'spring', gclid: 'g-1',
          trackerRef: 'partner-a', landingUrl: 'https://a.example/pricing?utm_campaign=spring' },
        landingPath: '/pricing', sessions: [{ sessionId: 's1', startedAt: '2026-11-20T10:00:00Z', endedAt: '2026-11-20T10:05:00Z', pageViews: 2, events: 2, landingPath: '/pricing' }],
        shops: [{ shop: 'a.myshopify.com', firstEventAt: '2026-11-21T09:00:00Z', firstEventName: 'install' }],
        events: [pv, paid], truncated: false } } } });
    await show('#/tracking/acquisitions/acq-1?source=src_1');
    const touch = await screen.findByTestId('journey-first-touch');
    expect(touch.textContent).toContain('spring');
    expect(touch.textContent).toContain('g-1');
    expect(touch.textContent).toContain('partner-a');
    expect(touch.textContent).toContain('/pricing');
    expect(screen.getByTestId('journey-shops').textContent).toContain('a.myshopify.com: joined');
    expect(screen.getByTestId('journey-sessions').querySelectorAll('tbody tr')).toHaveLength(1);
    const events = [...screen.getByTestId('journey-events').querySelectorAll('tbody tr')];
    expect(events.map((r) => r.getAttribute('data-evidence'))).toEqual(['Browser', 'Server']);
    expect(query('/api/v1/tracking/acquisitions/acq-1')[0]).toEqual({ sourceId: 'src_1' });
  });

  it('says what an unknown ID means', async () => {
    stubFetch({ 'GET /api/admin/sources': { body: { sources: [] } } });
    await show('#/tracking/acquisitions/nobody');
    await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('not_found'));
    expect(screen.getByText(/getAcquisitionId/)).toBeTruthy();
  });
});
