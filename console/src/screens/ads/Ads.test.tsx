import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { parseHash } from '../../router';
import { session, workspace } from '../../session';
import { requests, stubFetch, type Answer } from '../../test/fetch';
import { Ads } from '../Ads';
import { sentSince } from './Queue';

const filters = { from: '2026-10-28', to: '2026-11-26' };
const at = '2026-11-26T10:00:00Z';
const connection = { workspaceId: 'w', connectionId: 'c1', provider: 'google', state: 'connected', grantedScopes: ['datamanager', 'adwords'],
  conversionCustomerId: '1234567890', loginCustomerId: '9876543210', lastError: '', connectedBy: 'user:u', googleAccountId: 'g1',
  googleAccountEmail: 'ads-owner@example.com', sealedWithKey: 'k1', createdAt: at, updatedAt: at };
const mapping = { mappingId: 'm1', workspaceId: 'w', connectionId: 'c1', sourceId: 's1', milestone: 'install', conversionActionId: '7723667020',
  conversionActionName: 'Qualified lead (offline)', consentConfirmed: true, validationOnly: true, enabled: true, createdAt: at, updatedAt: at };
const row = (over: Record<string, unknown>) => ({ rowId: 'r1', workspaceId: 'w', mappingId: 'm1', sourceId: 's1', eventIdHash: 'h', transactionId: 'rt-1',
  milestone: 'install', acquisitionId: 'a1', clickIdType: 'gclid', clickId: 'G-1', eventTime: at, status: 'validated', validationOnly: true,
  attempts: 1, reasonCodes: [], pollAttempts: 0, createdAt: at, updatedAt: at, ...over });

function as(role: 'owner' | 'admin' | 'member') {
  session.value = { user: { id: 'u', email: 'a@b.example', name: 'A' }, csrfToken: 't', workspaces: [{ id: 'w', slug: 'demo', name: 'Demo', role }] };
  workspace.value = 'demo';
}

function answers(extra: Record<string, Answer | ((r: Request) => Answer)> = {}) {
  stubFetch({
    'GET /api/admin/ads/connection': { body: { configured: true, accountDiscovery: true, state: 'connected', ready: true, connection } },
    'GET /api/admin/ads/conversion-actions': { body: { actions: [{ id: '7723667020', name: 'Qualified lead (offline)', status: 'ENABLED', refreshedAt: at }] } },
    'GET /api/admin/ads/mappings': { body: { mappings: [mapping] } },
    'GET /api/admin/sources': { body: { sources: [{ id: 's1', workspaceId: 'w', appId: 'demo-upsell', name: 'Install page', allowedOrigins: [], enabled: true,
      publicKey: 'pk', createdAt: at, updatedAt: at }] } },
    'GET /api/admin/ads/verification': { body: { workspaceId: 'w', connectionState: 'connected', ready: true, mappings: [{ mappingId: 'm1', sourceId: 's1',
      milestone: 'install', conversionActionId: '7723667020', enabled: true, validationOnly: true, next: 'queue_row', steps: [
        { step: 'page_view', done: true, at, hint: 'page views arrive' }, { step: 'verified_event', done: true, at, hint: 'an install arrived' },
        { step: 'queue_row', done: false, hint: 'no row with click evidence yet' }] }] } },
    ...extra,
  });
}

const open = (hash: string) => render(<Ads route={parseHash(hash)} filters={filters} />);
afterEach(() => { location.hash = ''; });

describe('Ads: roles', () => {
  it('shows a member the setup read-only: no connect, account form, disconnect, mapping form or Retry', async () => {
    answers({ 'GET /api/admin/ads/queue': { body: { rows: [row({ status: 'rejected', reasonCodes: ['INVALID_GCLID'] })] } } });
    as('member');
    const { unmount } = open('#/ads');
    await screen.findByTestId('ads-read-only');
    expect((await screen.findByTestId('ads-account')).textContent).toContain('1234567890');
    expect(screen.queryByRole('button', { name: /Connect|Disconnect|Save account|Refresh/ })).toBeNull();
    unmount();
    const m = open('#/ads/mappings');
    await screen.findByTestId('ads-mappings-table');
    expect(screen.queryByTestId('ads-mapping-form')).toBeNull();
    expect(screen.queryByRole('button', { name: /Turn off/ })).toBeNull();
    m.unmount();
    open('#/ads/queue');
    await screen.findByTestId('ads-queue-table');
    expect(screen.queryByRole('button', { name: /Retry/ })).toBeNull();
  });
});

describe('Ads: connection', () => {
  it('shows the API\'s refusal of a customer ID under the field it names', async () => {
    answers({ 'PUT /api/admin/ads/connection/account': { status: 400, body: { error: 'invalid_parameter',
      message: 'invalid: manager login customer ID "98": want the 10-digit ID of the manager account, or none' } } });
    as('owner');
    open('#/ads');
    const manager = await screen.findByLabelText(/Manager login customer ID/);
    fireEvent.input(manager, { target: { value: '98' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save account' }));
    const err = await screen.findByText(/manager login customer ID "98"/);
    expect(manager.getAttribute('aria-describedby')).toBe(err.id);
    expect(screen.getByLabelText(/Conversion customer ID/).getAttribute('aria-describedby')).toBeNull();
  });

  it('disconnects only after a confirmation; an unconfirmed revocation is an error with Retry', async () => {
    let deletes = 0;
    answers({ 'DELETE /api/admin/ads/connection': () => (++deletes === 1
      ? { status: 502, body: { error: 'revocation_unconfirmed', message: 'Google did not confirm the revocation: the connection stays connected; retry' } }
      : { body: { connection: { ...connection, state: 'disconnected' } } }) });
    as('admin');
    open('#/ads');
    fireEvent.click(await screen.findByRole('button', { name: 'Disconnect…' }));
    expect(deletes).toBe(0);
    fireEvent.click(screen.getByRole('button', { name: 'Disconnect' }));
    const note = await screen.findByTestId('ads-connection-note');
    await waitFor(() => expect(note.textContent).toContain('Google did not confirm the revocation'));
    expect(note.getAttribute('role')).toBe('alert');
    fireEvent.click(within(note).getByRole('button', { name: 'Retry disconnect' }));
    await waitFor(() => expect(screen.getByTestId('ads-connection-note').textContent).toContain('Disconnected'));
    expect(deletes).toBe(2);
  });

  it('shows the verification order as a checklist, the next step marked', async () => {
    answers();
    as('member');
    open('#/ads');
    const list = await screen.findByTestId('ads-checklist');
    const steps = [...list.querySelectorAll('li')].map((li) => [li.dataset.step, li.dataset.done, li.className]);
    expect(steps).toEqual([['page_view', 'true', 'done'], ['verified_event', 'true', 'done'], ['queue_row', 'false', 'next']]);
    expect(list.textContent).toContain('no row with click evidence yet');
  });
});

describe('Ads: mappings', () => {
  it('creates a mapping with Validation only on by default; a consent refusal shows under the confirmations', async () => {
    answers({ 'POST /api/admin/ads/mappings': () => ({ status: 400, body: { error: 'invalid_parameter',
      message: 'invalid: confirm that the uploaded events have the users\' consent and follow the platform\'s processing policy (consentConfirmed: true)' } }) });
    as('owner');
    open('#/ads/mappings');
    const form = await screen.findByTestId('ads-mapping-form');
    expect((within(form).getByLabelText(/Validation only/) as HTMLInputElement).checked).toBe(true);
    fireEvent.click(within(form).getByRole('button', { name: 'Create mapping' }));
    const err = await within(form).findByText(/consentConfirmed: true/);
    expect(err.id).toBe('ads-map-consent-err');
    const sent = await requests.find((r) => r.method === 'POST')!.clone().json();
    expect(sent).toEqual({ sourceId: 's1', milestone: 'install', conversionActionId: '7723667020', consentConfirmed: false, validationOnly: true });
  });

  it('turns Validation only off with a PATCH and says validated rows are not replayed', async () => {
    answers({ 'PATCH /api/admin/ads/mappings/m1': { body: { mapping: { ...mapping, validationOnly: false } } } });
    as('owner');
    open('#/ads/mappings');
    fireEvent.click(await screen.findByRole('button', { name: /Turn off \(upload live\)/ }));
    const note = await screen.findByTestId('ads-mapping-note');
    expect(note.textContent).toContain('not replayed');
    const patch = requests.find((r) => r.method === 'PATCH')!;
    expect(await patch.clone().json()).toEqual({ validationOnly: false });
  });
});

describe('Ads: upload queue', () => {
  it('lists state, click evidence, diagnosis with reason codes and request ID; Retry only where click evidence remains, its refusal on the row', async () => {
    answers({
      'GET /api/admin/ads/queue': { body: { rows: [
        row({ rowId: 'r1', status: 'rejected', reasonCodes: ['INVALID_CLICK_ID_FIELD', 'INVALID_FORMAT'], requestId: 'req-9',
          diagnosis: { code: 'invalid_click_id', hint: 'only genuine clicks are eligible' } }),
        row({ rowId: 'r2', status: 'unattributed', clickIdType: '', clickId: '', diagnosis: { code: 'unattributed', hint: 'no click ID captured' } }),
      ] } },
      'POST /api/admin/ads/queue/r1/retry': { status: 409, body: { error: 'not_retryable', reason: 'local_reason', message: 'the row was rejected for a local reason' } },
    });
    as('admin');
    open('#/ads/queue?status=rejected');
    const table = await screen.findByTestId('ads-queue-table');
    const r1 = table.querySelector('tr[data-row="r1"]') as HTMLElement;
    expect(r1.textContent).toContain('gclid G-1');
    expect(r1.textContent).toContain('Invalid click ID: only genuine clicks are eligible');
    expect(r1.textContent).toContain('INVALID_CLICK_ID_FIELD');
    expect(r1.textContent).toContain('req-9');
    expect(within(table.querySelector('tr[data-row="r2"]') as HTMLElement).queryByRole('button')).toBeNull();
    expect(new URL(requests.find((r) => r.url.includes('/queue'))!.url).searchParams.get('status')).toBe('rejected');
    fireEvent.click(within(r1).getByRole('button', { name: /Retry/ }));
    expect((await within(r1).findByRole('alert')).textContent).toBe('the row was rejected for a local reason');
  });
});

describe('Ads: Retry note', () => {
  it('stands until the row is sent again: times compared to the second, an attempt counted since the Retry', () => {
    const at = Date.parse('2026-11-26T10:00:05.700Z'); // the Retry's answer
    const r = (updatedAt: string, attempts: number) => row({ updatedAt, attempts }) as Parameters<typeof sentSince>[0];
    expect(sentSince(r('2026-11-26T10:00:01Z', 1), at)).toBe(false); // the refusal before the Retry
    expect(sentSince(r('2026-11-26T10:00:05Z', 0), at)).toBe(false); // the Retry's own write
    expect(sentSince(r('2026-11-26T10:00:05Z', 1), at)).toBe(true); // sent in the same second
    expect(sentSince(r('2026-11-26T10:00:06Z', 1), at)).toBe(true);
  });
});
