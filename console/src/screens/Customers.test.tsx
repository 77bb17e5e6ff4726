import { fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { beforeEach, describe, expect, it } from 'vitest';
import { requests, stubFetch } from '../test/fetch';
import { useRoute } from '../router';
import { session, workspace } from '../session';
import { Customers } from './Customers';

const filters = { from: '2026-10-28', to: '2026-11-26' };
const customer = (id: string, name: string, domain: string, paying: boolean) => ({ id, appId: 'demo-upsell', name, domain, status: 'installed',
  paying, reportExcluded: false, amrCents: paying ? 4900 : 0, amrCurrency: paying ? 'USD' : undefined, health: paying ? 'healthy' : 'not_paying',
  storeClassification: 'production' });
const all = [customer('cus_1', 'Acme Outdoor', 'acme-outdoor.myshopify.com', true), customer('cus_2', 'Bolt', 'bolt.myshopify.com', false),
  customer('cus_3', 'Cedar', 'ACME-cedar.myshopify.com', false)];
const page = (customers: unknown[], nextCursor: string | null = null) =>
  ({ body: { customers, nextCursor, range: filters, customerScope: 'included', source: 'customers' } });

// The screen under its route, as App renders it: a filter change goes through the fragment.
function Screen() {
  const route = useRoute();
  return <Customers route={route} filters={filters} />;
}

const sent = () => requests.filter((r) => new URL(r.url).pathname === '/api/v1/customers').map((r) => new URL(r.url).searchParams);
const shownDomains = () => [...screen.getByTestId('customers').querySelectorAll('tbody tr td:first-of-type')].map((td) => td.textContent);

beforeEach(() => {
  session.value = { user: { id: 'u', email: 'a@b.example', name: 'A' }, csrfToken: 't', workspaces: [{ id: 'w', slug: 'demo', name: 'Demo', role: 'member' }] };
  workspace.value = 'demo';
  location.hash = `#/customers?from=${filters.from}&to=${filters.to}`;
});

describe('Customers', () => {
  it('sends the search and the paying filter to the API and shows its answer, not a filtered page', async () => {
    // A stand-in server that filters as the API does.
    stubFetch({ 'GET /api/v1/customers': (r) => {
      const p = new URL(r.url).searchParams;
      const q = (p.get('q') || '').toLowerCase();
      return page(all.filter((c) => (!q || c.name.toLowerCase().includes(q) || c.domain.toLowerCase().includes(q)) &&
        (!p.has('paying') || String(c.paying) === p.get('paying'))));
    } });
    render(<Screen />);
    await screen.findByTestId('customers');
    expect(shownDomains()).toHaveLength(3);
    expect(sent()[0].has('q')).toBe(false);
    expect(sent()[0].has('paying')).toBe(false);

    fireEvent.input(screen.getByLabelText('Search name or shop domain'), { target: { value: '  acme ' } });
    await waitFor(() => expect(shownDomains()).toEqual(['acme-outdoor.myshopify.com', 'ACME-cedar.myshopify.com']), { timeout: 2000 });
    expect(sent().at(-1)!.get('q')).toBe('acme');
    expect(location.hash).toContain('q=acme');

    fireEvent.change(screen.getByLabelText('Paying'), { target: { value: 'false' } });
    await waitFor(() => expect(shownDomains()).toEqual(['ACME-cedar.myshopify.com']));
    const last = sent().at(-1)!;
    expect([last.get('q'), last.get('paying'), last.get('customerScope'), last.get('from'), last.get('to')])
      .toEqual(['acme', 'false', 'included', filters.from, filters.to]);
  });

  it('says no customers match when the API lists none', async () => {
    location.hash += '&q=nothing';
    stubFetch({ 'GET /api/v1/customers': page([]) });
    render(<Screen />);
    expect((await screen.findByTestId('customers-empty')).textContent).toBe('No customers match these filters.');
    expect(screen.queryByTestId('customers')).toBeNull();
    expect(sent()[0].get('q')).toBe('nothing');
  });

  it('pages with nextCursor, keeping the filters, and goes past an empty page at once', async () => {
    location.hash += '&paying=true';
    stubFetch({ 'GET /api/v1/customers': (r) => {
      switch (new URL(r.url).searchParams.get('cursor')) {
        case null: return page([all[0]], 'cus_1');
        case 'cus_1': return page([], 'cus_2'); // the server's scan bound: an empty page that goes on
        case 'cus_2': return page([customer('cus_9', 'Zed', 'zed.myshopify.com', true)]);
      }
      return { status: 400, body: { error: 'invalid_parameter', message: 'cursor' } };
    } });
    render(<Screen />);
    await screen.findByTestId('customers');
    fireEvent.click(screen.getByRole('button', { name: 'Next page' }));
    await waitFor(() => expect(shownDomains()).toEqual(['zed.myshopify.com']));
    expect(sent().map((p) => [p.get('cursor'), p.get('paying')])).toEqual([[null, 'true'], ['cus_1', 'true'], ['cus_2', 'true']]);
    expect((screen.getByRole('button', { name: 'Next page' }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByRole('button', { name: 'Previous page' }));
    await waitFor(() => expect(shownDomains()).toEqual(['acme-outdoor.myshopify.com']));
  });
});
