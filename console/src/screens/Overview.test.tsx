import { render, screen, waitFor } from '@testing-library/preact';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { stubFetch } from '../test/fetch';

vi.mock('../components/Chart', () => ({ Chart: ({ title }: { title: string }) => <figure>{title}</figure> }));

const cov = { complete: true, coverageFrom: '2025-05-01', coverageThrough: '2026-11-25' };
const coverage = { transactions: { ...cov, truncated: false }, lifecycle: cov, observedUsageCharges: cov,
  usageActivity: { source: 'received_usage_events', loaded: true, complete: null },
  apps: [{ appId: 'demo-upsell', lastSuccessfulSyncAt: '2026-11-26T10:00:00Z', lastSyncStatus: 'succeeded', transactions: { ...cov, truncated: false }, lifecycle: cov, observedUsageCharges: cov }] };
const block = (mrr: number, paying: number) => ({ mrrCents: mrr, subscriptionMrrCents: mrr, usageMrrCents: 0, arrCents: mrr * 12, payingCustomers: paying,
  arpuCents: Math.round(mrr / paying), netRevenueRetentionRate: 1.05, largestCustomerShare: 0.1, topFiveCustomerShare: 0.3, topTenCustomerShare: 0.5,
  usage: {} });

beforeEach(() => {
  stubFetch({
    'GET /api/v1/summary': { body: { currencies: ['EUR', 'USD'], byCurrency: { EUR: block(150000, 12), USD: block(990000, 40) },
      staleDataWarning: 'the last sync of demo-upsell failed', coverage } },
    'GET /api/v1/metrics/mrr': { body: { points: [], currencies: ['EUR', 'USD'], coverage } },
    'GET /api/v1/mrr-movements': { body: { periods: [], currencies: ['EUR', 'USD'], coverage } },
  });
});

describe('Overview', () => {
  it('shows each currency on its own, never a total across currencies', async () => {
    const { Overview } = await import('./Overview');
    render(<Overview filters={{ from: '2026-10-28', to: '2026-11-26' }} />);
    await screen.findByTestId('kpi-USD-mrrCents');
    expect(screen.getByTestId('kpi-USD-mrrCents').textContent).toBe('$9,900.00');
    expect(screen.getByTestId('kpi-EUR-mrrCents').textContent).toBe('€1,500.00');
    expect(screen.getByTestId('kpi-EUR-arrCents').textContent).toBe('€18,000.00');
    expect(screen.getByTestId('kpi-USD-netRevenueRetentionRate').textContent).toBe('105.0%');
    expect(document.body.textContent).not.toContain('11,400'); // 9,900 + 1,500
  });
  it('shows the stale-data warning and the coverage where they are seen', async () => {
    const { Overview } = await import('./Overview');
    render(<Overview filters={{ from: '2026-10-28', to: '2026-11-26' }} />);
    await waitFor(() => expect(screen.getByTestId('stale-warning').textContent).toContain('the last sync of demo-upsell failed'));
    expect(screen.getByTestId('coverage').textContent).toContain('demo-upsell');
  });
  it('asks the API for the range and app of the filters', async () => {
    const { requests } = await import('../test/fetch');
    const { Overview } = await import('./Overview');
    render(<Overview filters={{ from: '2026-10-28', to: '2026-11-26', appId: 'demo-upsell' }} />);
    await screen.findByTestId('kpi-USD-mrrCents');
    const summary = requests.find((r) => r.url.includes('/api/v1/summary'))!;
    expect(new URL(summary.url).search).toBe('?from=2026-10-28&to=2026-11-26&appId=demo-upsell');
  });
});
