import { render, screen } from '@testing-library/preact';
import { beforeEach, describe, expect, it } from 'vitest';
import { requests, stubFetch } from '../test/fetch';
import { parseHash } from '../router';

const cov = { complete: true, coverageFrom: '2025-05-01', coverageThrough: '2026-11-25' };
type Tracking = { appId: string; firstBrowserEventAt: string | null; coversRange: boolean }[];
const coverage = (tracking: Tracking) =>
  ({ transactions: { ...cov, truncated: false }, lifecycle: cov, apps: [], tracking });
const money = (mrr: number, net: number) => ({ payingCustomers: 1, mrrCents: mrr, subscriptionMrrCents: mrr, usageMrrCents: 0, netRevenueCents: net });
const row = (kind: string, key: string | null, extra: object = {}) => ({ kind, key, acquisitions: 0, installs: 0, trialsStarted: 0, trialsConverted: 0,
  customers: 0, payingCustomers: 0, installRate: null, trialStartRate: null, trialConversionRate: null, payingRate: null, byCurrency: {}, ...extra });
const special = [row('unattributed', null, { customers: 3 }), row('before_tracking', null, { customers: 40 }), row('no_browser_history', null)];

function answer(rows: object[], tracking: Tracking = [{ appId: 'demo-upsell', firstBrowserEventAt: '2026-06-01T08:00:00Z', coversRange: false }]) {
  return { groupBy: 'utm_campaign', currencies: ['EUR', 'USD'], staleDataWarning: null, coverage: coverage(tracking), rows };
}

async function show(hash = '#/acquisition?from=2026-10-28&to=2026-11-26') {
  const { Acquisition } = await import('./Acquisition');
  const route = parseHash(hash);
  render(<Acquisition route={route} filters={{ from: '2026-10-28', to: '2026-11-26' }} />);
  return screen.findByTestId('tracking-coverage');
}

describe('Acquisition', () => {
  beforeEach(() => {
    stubFetch({ 'GET /api/v1/attribution': { body: answer([
      row('channel', 'black_friday', { acquisitions: 200, installs: 50, installRate: 0.25, trialsStarted: 20, trialStartRate: 0.4, trialsConverted: 5,
        trialConversionRate: 0.25, customers: 48, payingCustomers: 12, payingRate: 0.25, byCurrency: { USD: money(99000, 123456), EUR: money(1500, -200) } }),
      row('channel', ''), ...special]) } });
  });
  it('shows every column the API gives, money per currency and never summed', async () => {
    await show();
    const cells = (table: string) => [...screen.getByTestId(table).querySelectorAll('tr[data-kind="channel"]')[0].children].map((c) => c.textContent);
    expect(cells('attribution')).toEqual(['black_friday', '200', '50', '25.0%', '20', '40.0%', '5', '25.0%', '48', '12', '25.0%']);
    expect(cells('attribution-USD')).toEqual(['black_friday', '1', '$990.00', '$1,234.56']);
    expect(cells('attribution-EUR')).toEqual(['black_friday', '1', '€15.00', '-€2.00']);
    // A row without a block in a currency has nothing in it.
    expect([...screen.getByTestId('attribution-USD').querySelectorAll('tr[data-kind="before_tracking"] td')].map((c) => c.textContent)).toEqual(['—', '—', '—']);
    expect(document.body.textContent).not.toContain('1,005'); // $990 + €15
    expect(screen.getByTestId('attribution').querySelectorAll('tr[data-kind="channel"]')[1].children[0].textContent).toBe('(no UTM campaign)');
  });
  it('shows since when each app tracks above the table, and explains the rows that are not channels', async () => {
    const cov = await show();
    expect(cov.textContent).toContain('demo-upsell: collecting since Jun 1, 2026');
    expect(cov.textContent).toContain('earlier installs count as Before tracking');
    expect(cov.compareDocumentPosition(screen.getByTestId('attribution')) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    const legend = screen.getByTestId('attribution-legend').textContent!;
    for (const name of ['Before tracking', 'No browser history', 'Unattributed']) expect(legend).toContain(name);
    expect(screen.queryByTestId('attribution-empty')).toBeNull();
  });
  it('sends the chosen groupBy and offers every dimension the API takes', async () => {
    await show('#/acquisition?groupBy=landing_path');
    expect(new URL(requests[0].url).searchParams.get('groupBy')).toBe('landing_path');
    const options = [...screen.getByLabelText('Channel by').querySelectorAll('option')].map((o) => o.value).sort();
    expect(options).toEqual(['click_id_type', 'landing_path', 'tracker_ref', 'utm_campaign', 'utm_medium', 'utm_source']);
  });
  it('says how to set up tracking when no app collects', async () => {
    stubFetch({ 'GET /api/v1/attribution': { body: answer(special, [{ appId: 'demo-upsell', firstBrowserEventAt: null, coversRange: false }]) } });
    const cov = await show();
    expect(cov.textContent).toContain('not collecting');
    const empty = screen.getByTestId('attribution-empty').textContent!;
    expect(empty).toContain('revtrack admin source create');
    expect(empty).toContain('docs/TRACKING.md');
  });
});
