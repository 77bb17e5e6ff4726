import { fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { beforeEach, describe, expect, it } from 'vitest';
import { requests, stubFetch } from '../../test/fetch';
import { session, workspace } from '../../session';
import { Sources } from '../Sources';
import { freshKey } from './access';
import { checklist, nextStep } from './checklist';

const src = { id: 'src_1', workspaceId: 'w', appId: 'demo-upsell', name: 'Install page', allowedOrigins: ['https://app.example.com'], enabled: true,
  publicKey: 'tracker_pk_abc', createdAt: '2026-11-26T10:00:00Z', updatedAt: '2026-11-26T10:00:00Z' };
const seen = (count: number, lastAt: string | null = null) => ({ count, lastAt });
const conditions = [
  { code: 'origin_not_allowed', checked: true, detected: false, message: 'none refused' },
  { code: 'source_unavailable', checked: true, detected: false, message: 'none refused' },
  { code: 'no_page_view', checked: true, detected: true, message: 'No page view received' },
  { code: 'no_lifecycle_event', checked: true, detected: true, message: 'No lifecycle event received' },
];
const status = (over: Record<string, unknown> = {}) => ({ workspaceId: 'w', sourceId: 'src_1', since: '2026-10-27T00:00:00Z', pageViews: seen(0),
  lifecycleEvents: seen(0), identifiedEvents: 0, clickEvidence: { browserEvents: 0, acquisitions: 0, lifecycleEvents: 0 }, conditions, hint: 'h',
  refusals: { since: '2026-11-19T00:00:00Z', origins: [], keys: [] }, ...over });
const route = (path: string) => ({ path, params: new URLSearchParams() });
const filters = {} as never;

function as(role: 'owner' | 'admin' | 'member') {
  session.value = { user: { id: 'u', email: 'a@b.example', name: 'A' }, csrfToken: 't', workspaces: [{ id: 'w', slug: 'demo', name: 'Demo', role }] };
  workspace.value = 'demo';
}

function stubSource(st = status()) {
  stubFetch({
    'GET /api/admin/sources/src_1': { body: { source: src } },
    'GET /api/v1/tracking/sources/src_1/status': { body: st },
    'POST /api/admin/sources/src_1/rotate-public-key': { body: { source: { ...src, publicKey: 'tracker_pk_new' } } },
    'POST /api/admin/sources/src_1/rotate-private-key': { body: { source: src, privateKey: 'tracker_sk_rotated', note: 'n' } },
    'PATCH /api/admin/sources/src_1': { body: { source: { ...src, enabled: false } } },
  });
}

beforeEach(() => { freshKey.value = null; location.hash = ''; });

describe('Sources: create', () => {
  it('shows the API\'s refusal next to the origins field, then opens the new source with its private key shown once', async () => {
    let attempt = 0;
    stubFetch({
      'GET /api/admin/sources': { body: { sources: [] } },
      'GET /api/v1/summary': { body: { coverage: { apps: [{ appId: 'demo-upsell' }, { appId: 'demo-reviews' }] } } },
      'POST /api/admin/sources': () => (++attempt === 1
        ? { status: 400, body: { error: 'invalid_parameter', message: 'invalid parameter: origin "https://app.example.com/install": only scheme, host and port, no path, query, user or wildcard' } }
        : { status: 201, body: { source: src, privateKey: 'tracker_sk_once', note: 'n' } }),
    });
    as('admin');
    render(<Sources route={route('/sources')} filters={filters} />);
    await screen.findByTestId('sources-empty');
    const app = await screen.findByLabelText('App of the source') as HTMLSelectElement;
    await waitFor(() => expect(app.options.length).toBe(2));
    fireEvent.change(app, { target: { value: 'demo-reviews' } });
    const origins = screen.getByLabelText(/Allowed origins/);
    fireEvent.input(origins, { target: { value: 'https://app.example.com/install' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create source' }));
    const refusal = await screen.findByRole('alert');
    expect(refusal.textContent).toContain('only scheme, host and port');
    expect(refusal.id).toBe('create-allowedOrigins-error');
    expect(origins.getAttribute('aria-describedby')).toContain('create-allowedOrigins-error');
    fireEvent.input(origins, { target: { value: 'https://app.example.com\nhttp://localhost:3000' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create source' }));
    await waitFor(() => expect(location.hash).toBe('#/sources/src_1'));
    const body = await requests.filter((r) => r.method === 'POST').at(-1)!.clone().json();
    expect(body).toEqual({ appId: 'demo-reviews', name: '', allowedOrigins: ['https://app.example.com', 'http://localhost:3000'] });
    expect(freshKey.value).toMatchObject({ sourceId: 'src_1', privateKey: 'tracker_sk_once' });

    stubSource();
    const { unmount } = render(<Sources route={route('/sources/src_1')} filters={filters} />);
    const once = await screen.findByTestId('private-key-once');
    expect(once.textContent).toContain('you will not see this again');
    expect((screen.getByLabelText('Private key') as HTMLInputElement).value).toBe('tracker_sk_once');
    expect(screen.getByRole('button', { name: 'Copy private key' })).toBeTruthy();
    unmount();
    expect(freshKey.value).toBeNull(); // leaving the page forgets it
  });
});

describe('Sources: roles', () => {
  it('members read: no creation form, no key or state buttons', async () => {
    stubFetch({ 'GET /api/admin/sources': { body: { sources: [src] } } });
    as('member');
    const list = render(<Sources route={route('/sources')} filters={filters} />);
    await screen.findByTestId('sources');
    expect(screen.queryByTestId('create-source')).toBeNull();
    list.unmount();
    stubSource();
    render(<Sources route={route('/sources/src_1')} filters={filters} />);
    await screen.findByTestId('read-only');
    expect(screen.queryByRole('button', { name: /Rotate|Disable|Enable/ })).toBeNull();
  });
});

describe('Sources: actions', () => {
  it('rotating the public key spells out the consequence first, then calls the API', async () => {
    stubSource();
    as('owner');
    render(<Sources route={route('/sources/src_1')} filters={filters} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Rotate public key…' }));
    const dialog = screen.getByRole('alertdialog');
    expect(dialog.textContent).toContain('the old key is refused from now on');
    expect(dialog.textContent).toContain('on every page');
    expect(requests.some((r) => r.method === 'POST')).toBe(false);
    fireEvent.click(screen.getByRole('button', { name: 'Rotate public key' }));
    await screen.findByText(/The public key was rotated/);
    expect(requests.some((r) => r.method === 'POST' && r.url.endsWith('/rotate-public-key'))).toBe(true);
  });

  it('rotating the private key shows the new one once; disabling asks first and says what stops', async () => {
    stubSource();
    as('admin');
    render(<Sources route={route('/sources/src_1')} filters={filters} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Rotate private key…' }));
    expect(screen.getByRole('alertdialog').textContent).toContain('REVTRACK_TRACKER_SK');
    fireEvent.click(screen.getByRole('button', { name: 'Rotate private key' }));
    expect(((await screen.findByLabelText('Private key')) as HTMLInputElement).value).toBe('tracker_sk_rotated');
    fireEvent.click(screen.getByRole('button', { name: 'Disable source…' }));
    expect(screen.getByRole('alertdialog').textContent).toContain('is refused from now on');
    fireEvent.click(screen.getByRole('button', { name: 'Disable source' }));
    await screen.findByText('The source is disabled.');
    const patch = requests.find((r) => r.method === 'PATCH')!;
    expect(await patch.clone().json()).toEqual({ enabled: false });
  });
});

describe('Sources: allowed origins', () => {
  it('replaces the whole list; the API\'s refusal is shown next to the field', async () => {
    let attempt = 0;
    stubFetch({
      'GET /api/admin/sources/src_1': { body: { source: src } },
      'GET /api/v1/tracking/sources/src_1/status': { body: status() },
      'PATCH /api/admin/sources/src_1': () => (++attempt === 1
        ? { status: 400, body: { error: 'invalid_parameter', message: 'invalid parameter: origin "http://www.app.example.com": HTTPS is required (plain HTTP only for localhost and 127.0.0.1)' } }
        : { body: { source: { ...src, allowedOrigins: ['https://app.example.com', 'https://www.app.example.com'] } } }),
    });
    as('admin');
    render(<Sources route={route('/sources/src_1')} filters={filters} />);
    const field = await screen.findByLabelText(/Allowed origins of this source/) as HTMLTextAreaElement;
    expect(field.value).toBe('https://app.example.com');
    fireEvent.input(field, { target: { value: 'https://app.example.com\nhttp://www.app.example.com' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save allowed origins' }));
    const refusal = await screen.findByRole('alert');
    expect(refusal.id).toBe('edit-origins-error');
    expect(refusal.textContent).toContain('HTTPS is required');
    expect(field.getAttribute('aria-describedby')).toContain('edit-origins-error');
    fireEvent.input(field, { target: { value: 'https://app.example.com\nhttps://www.app.example.com' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save allowed origins' }));
    await screen.findByText(/Allowed origins saved/);
    expect(await requests.filter((r) => r.method === 'PATCH').at(-1)!.clone().json()).toEqual({ allowedOrigins: ['https://app.example.com', 'https://www.app.example.com'] });
    expect(screen.getByTestId('source-origins').textContent).toBe('https://app.example.com https://www.app.example.com');
  });
});

describe('Sources: status panel and snippets', () => {
  it('with no page view, says what to check; refusals are listed', async () => {
    stubSource(status({ refusals: { since: '2026-11-19T00:00:00Z', origins: [{ origin: 'https://www.app.example.com', count: 3, lastAt: '2026-11-26T09:00:00Z' }],
      keys: [{ reason: 'public_key_rotated', count: 2, lastAt: '2026-11-26T09:30:00Z' }] } }));
    as('member');
    render(<Sources route={route('/sources/src_1')} filters={filters} />);
    const empty = await screen.findByTestId('no-page-view');
    expect(empty.textContent).toContain('No page view yet: check the snippet, the public key and the allowed origin.');
    expect(screen.getByTestId('refused-origins').textContent).toContain('https://www.app.example.com: 3');
    expect(screen.getByTestId('refused-keys').textContent).toContain('a rotated public key');
    expect(screen.getByTestId('last-page-view').textContent).toBe('none yet');
    const steps = screen.getByTestId('checklist').querySelectorAll('li');
    expect([...steps].map((li) => li.dataset.done)).toEqual(['false', 'false', 'false', 'false']);
  });

  it('ticks the steps the data shows and gives the install snippets', async () => {
    stubSource(status({ pageViews: seen(4, '2026-11-26T11:00:00Z'), lifecycleEvents: seen(1, '2026-11-26T11:05:00Z') }));
    as('admin');
    render(<Sources route={route('/sources/src_1')} filters={filters} />);
    await screen.findByTestId('checklist');
    expect(screen.queryByTestId('no-page-view')).toBeNull();
    const li = (id: string) => screen.getByTestId('checklist').querySelector<HTMLElement>(`[data-step="${id}"]`)!;
    expect(li('page-view').dataset.done).toBe('true');
    expect(li('verified-event').dataset.done).toBe('true');
    expect(li('click-evidence').textContent).toContain('next: Open the page with a gclid');
    expect(screen.getByTestId('script-tag').textContent).toBe(`<script async src="${location.origin}/v1/tracker.js" data-key="tracker_pk_abc"></script>`);
    expect(screen.getByTestId('server-env').textContent).toContain('REVTRACK_TEAM=demo');
    const snippet = screen.getByTestId('server-snippet');
    expect(snippet.textContent).toContain("env('REVTRACK_TRACKER_SK')");
    fireEvent.change(screen.getByLabelText("Your server's stack"), { target: { value: 'rails' } });
    expect(screen.getByTestId('server-snippet').textContent).toContain('ENV.fetch("REVTRACK_TRACKER_SK")');
    fireEvent.change(screen.getByLabelText("Your server's stack"), { target: { value: 'laravel' } });
    expect(screen.getByTestId('server-snippet').textContent).toContain("self::env('REVTRACK_TRACKER_SK')");
  });

  it('the checklist follows docs/TRACKING.md, section 6, and names the next step', () => {
    const steps = checklist(status({ pageViews: seen(1), lifecycleEvents: seen(1), clickEvidence: { browserEvents: 2, acquisitions: 1, lifecycleEvents: 1 } }) as never);
    expect(steps.map((s) => [s.id, s.done])).toEqual([['page-view', true], ['verified-event', true], ['click-evidence', true], ['ad-upload', false]]);
    expect(nextStep(steps)?.id).toBe('ad-upload');
  });
});
