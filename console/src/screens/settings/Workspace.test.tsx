import { fireEvent, render, screen } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { requests, stubFetch } from '../../test/fetch';
import { as } from './as';
import { Workspace } from './Workspace';

const run = { runId: 'r1', appId: 'demo-upsell', trigger: 'manual', status: 'succeeded', startedAt: '2026-11-26T10:00:00Z', finishedAt: '2026-11-26T10:01:00Z',
  eventsCount: 10, transactionsCount: 2000, coverageFrom: null, coverageThrough: null, truncated: false, error: '', progress: null };
const conn = { workspaceId: 'w', organizationId: '1234567', sealedWithKey: 'k1', createdAt: '2026-11-20T10:00:00Z', updatedAt: '2026-11-20T10:00:00Z' };
const exclusion = { workspaceId: 'w', shopDomain: 'dev.myshopify.com', appId: '', excluded: true, reason: 'our development store', updatedAt: '2026-11-25T10:00:00Z' };

describe('Workspace settings', () => {
  it('says when the Partner API is not connected, and puts a refused token next to its field', async () => {
    as('admin');
    stubFetch({ 'GET /api/admin/partner-connection': { status: 404, body: { error: 'not_found', message: 'no partner connection' } },
      'GET /api/admin/sync-runs': { body: { runs: [] } }, 'GET /api/admin/customer-exclusions': { body: { exclusions: [] } },
      'PUT /api/admin/partner-connection': { status: 400, body: { error: 'invalid_parameter', message: 'invalid: access token is empty or contains whitespace' } } });
    render(<Workspace />);
    expect((await screen.findByTestId('partner-connected')).textContent).toBe('not connected');
    expect(screen.getByTestId('partner-last-sync').textContent).toBe('none yet');
    screen.getByText(/No shop is excluded/);
    fireEvent.input(screen.getByLabelText(/^Organization ID/), { target: { value: '1234567' } });
    fireEvent.input(screen.getByLabelText(/^Partner API access token/), { target: { value: 'a b' } });
    fireEvent.click(screen.getByRole('button', { name: 'Connect' }));
    expect((await screen.findByText(/contains whitespace/)).id).toBe('partner-token-error');
    const put = requests.find((r) => r.method === 'PUT')!;
    expect(await put.clone().json()).toEqual({ organizationId: '1234567', accessToken: 'a b' });
  });

  it('shows a member the connection, the last sync and the exclusions without any action', async () => {
    as('member');
    stubFetch({ 'GET /api/admin/partner-connection': { body: { partnerConnection: conn } }, 'GET /api/admin/sync-runs': { body: { runs: [run] } },
      'GET /api/admin/customer-exclusions': { body: { exclusions: [exclusion] } } });
    render(<Workspace />);
    expect((await screen.findByTestId('partner-connected')).textContent).toBe('connected to organization 1234567');
    expect(screen.getByTestId('partner-last-sync').textContent).toContain('demo-upsell: succeeded');
    expect((await screen.findByTestId('exclusions')).textContent).toContain('our development store');
    expect(screen.queryAllByRole('button')).toHaveLength(0);
    expect(screen.queryByLabelText(/access token/)).toBe(null);
    expect(screen.getByRole('link', { name: 'People' }).getAttribute('href')).toBe('#/people');
  });

  it('lifts an exclusion only after the confirmation, with the reason given', async () => {
    as('owner');
    stubFetch({ 'GET /api/admin/partner-connection': { body: { partnerConnection: conn } }, 'GET /api/admin/sync-runs': { body: { runs: [run] } },
      'GET /api/admin/customer-exclusions': { body: { exclusions: [exclusion] } },
      'DELETE /api/admin/customer-exclusions': { body: { exclusion: { ...exclusion, excluded: false } } } });
    render(<Workspace />);
    await screen.findByTestId('exclusions');
    fireEvent.click(screen.getByRole('button', { name: 'Lift the exclusion of dev.myshopify.com' }));
    await screen.findByRole('alertdialog');
    expect(requests.some((r) => r.method === 'DELETE')).toBe(false);
    fireEvent.input(screen.getByLabelText(/Reason for lifting/), { target: { value: 'now a customer' } });
    fireEvent.click(screen.getByRole('button', { name: 'Lift the exclusion' }));
    await screen.findByText(/counts again/);
    const del = new URL(requests.find((r) => r.method === 'DELETE')!.url);
    expect(Object.fromEntries(del.searchParams)).toEqual({ shopDomain: 'dev.myshopify.com', reason: 'now a customer' });
  });
});
