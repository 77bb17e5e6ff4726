// The Sources screen in Chromium against the real stack (console/browser_test.go starts it): create a
// source (a refused origin first, with the API's own message next to the field), its private key
// shown once, a page view from a page on its allowed origin (served here; a page on another origin
// is refused and shows as a refused origin), the status panel ticking itself, rotation of either key,
// disable and enable, and a member's read-only view. Screenshots `sources` and `source-status`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { api, axe, count, env, launch, newPage, screenshot, signIn } from './harness.mjs';

let browser;
const servers = [];
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); for (const s of servers) s.close(); });

// A page that loads the tracker with a public key, as the screen's install snippet says, served on
// 127.0.0.1 at a port of its own: an origin that is allowed or not.
async function pageOrigin() {
  const srv = createServer((req, res) => {
    const key = new URL(req.url, 'http://x').searchParams.get('key') || '';
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html lang="en"><title>App page</title><h1>App page</h1>
<script async src="${env.url}/v1/tracker.js" data-key="${key}"></script>`);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  servers.push(srv);
  return `http://127.0.0.1:${srv.address().port}`;
}

// What formatTimestamp (src/format.ts) shows.
const stamp = (iso) => new Date(iso).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC';

async function adminPost(path, body) {
  const r = await fetch(`${env.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${env.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

// collect posts one page view as tracker.js does, from an origin.
async function collect(origin, key) {
  const r = await fetch(`${env.url}/v1/collect`, { method: 'POST', headers: { origin, 'content-type': 'text/plain;charset=UTF-8' },
    body: JSON.stringify({ key, batch: [{ eventId: randomUUID(), name: 'page_view', occurredAt: new Date().toISOString(), acquisitionId: randomUUID(),
      sessionId: randomUUID(), url: `${origin}/`, path: '/' }] }) });
  return { status: r.status, body: await r.json() };
}

async function visit(url) {
  const ctx = await browser.newContext();
  const p = await ctx.newPage();
  // The page view's answer (202, or the refusal): closing the page earlier would cancel the request.
  const answered = p.waitForResponse((r) => new URL(r.url()).pathname === '/v1/collect' && r.request().method() === 'POST', { timeout: 60000 });
  await p.goto(url);
  await p.waitForFunction(() => window.tracker && window.tracker.getAcquisitionId());
  const acq = await p.evaluate(() => window.tracker.getAcquisitionId());
  await answered;
  await ctx.close();
  return acq;
}

test('Sources: create (refused origin, then a good one), key once, page view ticks the status panel, rotate, disable and enable', async () => {
  const allowed = await pageOrigin(), other = await pageOrigin();
  const { context, page, problems } = await newPage(browser);
  await signIn(page, '#/sources');
  const summary = await api('/api/v1/summary');
  const appId = summary.coverage.apps[0].appId;
  const name = `Browser test ${Date.now()}`;

  // A path is not an origin: the API refuses it, and the screen shows the API's own message at the field.
  const refused = await adminPost('/api/admin/sources', { appId, name, allowedOrigins: [`${allowed}/install`] });
  assert.equal(refused.status, 400);
  await page.getByLabel('App of the source').selectOption(appId);
  await page.getByLabel('Name').fill(name);
  await page.getByLabel(/Allowed origins/).fill(`${allowed}/install`);
  await page.getByRole('button', { name: 'Create source' }).click();
  const alert = page.locator('#create-allowedOrigins-error');
  await alert.waitFor();
  assert.equal(await alert.textContent(), refused.body.message);
  assert.deepEqual(await axe(page), [], 'sources: axe-core found serious or critical violations');

  await page.getByLabel(/Allowed origins/).fill(allowed);
  await page.getByRole('button', { name: 'Create source' }).click();
  await page.waitForFunction(() => /^#\/sources\/.+/.test(location.hash));
  const id = decodeURIComponent(await page.evaluate(() => location.hash.slice('#/sources/'.length)));
  await page.getByTestId('private-key-once').waitFor();
  assert.match(await page.getByTestId('private-key-once').textContent(), /you will not see this again/);
  const sk = await page.getByTestId('private-key').inputValue();
  assert.match(sk, /^tracker_sk_/);
  await page.getByRole('button', { name: 'Copy private key' }).waitFor();
  const { source } = await api(`/api/admin/sources/${id}`);
  assert.equal(source.name, name);
  assert.deepEqual(source.allowedOrigins, [allowed]);
  assert.equal(await page.getByTestId('public-key').textContent(), source.publicKey);
  assert.equal(await page.getByTestId('script-tag').textContent(), `<script async src="${env.url}/v1/tracker.js" data-key="${source.publicKey}"></script>`);

  // The list: every source of the API, in its order; the key is not shown again.
  await page.getByRole('link', { name: 'All tracking sources' }).click();
  const table = page.getByTestId('sources');
  await table.waitFor();
  const listed = await api('/api/admin/sources');
  assert.deepEqual(await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.source)), listed.sources.map((s) => s.id));
  await screenshot(page, 'sources');
  await table.getByRole('link', { name }).click();
  await page.getByTestId('source-status').waitFor();
  assert.equal(await page.getByTestId('private-key-once').count(), 0, 'the private key is shown once only');

  // No page view yet: the empty state says what to check.
  await page.getByTestId('no-page-view').waitFor();
  assert.match(await page.getByTestId('no-page-view').textContent(), /No page view yet: check the snippet, the public key and the allowed origin\./);
  assert.deepEqual(await axe(page), [], 'source: axe-core found serious or critical violations');

  // A page on another origin is refused, and the panel names that origin; one on the allowed origin is a page view.
  await visit(`${other}/page.html?key=${source.publicKey}`);
  await page.getByTestId('refused-origins').getByText(other).waitFor({ timeout: 30000 });
  const t0 = Date.now();
  const acq = await visit(`${allowed}/page.html?key=${source.publicKey}`);
  await page.locator('[data-step="page-view"][data-done="true"]').waitFor({ timeout: 120000 });
  // Measured, not asserted: the edge, Kafka, the consumer and the 5 s refresh in one number.
  console.log(`SOURCES page_view_to_checklist_ms=${Date.now() - t0}`);
  const st = await api(`/api/v1/tracking/sources/${id}/status`);
  assert.ok(st.pageViews.count >= 1);
  assert.equal(await page.getByTestId('last-page-view').textContent(), `${stamp(st.pageViews.lastAt)} (${count(st.pageViews.count)} in all)`);
  assert.equal(await page.getByTestId('no-page-view').count(), 0);
  assert.deepEqual(st.refusals.origins.map((o) => o.origin), [other]);

  // The verified event, sent by the Node snippet with the page's acquisition ID: the next step ticks.
  Object.assign(process.env, { REVTRACK_URL: env.url, REVTRACK_TEAM: 'demo', REVTRACK_TRACKER_PK: source.publicKey, REVTRACK_TRACKER_SK: sk });
  const snippet = await import('../src/snippets/node-remix.server.mjs');
  const store = new Map();
  const session = { get: (k) => store.get(k), set: (k, v) => store.set(k, v) };
  snippet.rememberAcquisition(session, acq);
  const t1 = Date.now();
  await snippet.sendVerifiedEvent(snippet.verifiedEvent(session, { name: 'install', shop: `sources-${acq.slice(0, 8)}.myshopify.com` }));
  await page.locator('[data-step="verified-event"][data-done="true"]').waitFor({ timeout: 120000 });
  console.log(`SOURCES server_event_to_checklist_ms=${Date.now() - t1}`);
  await screenshot(page, 'source-status');

  // Rotate the public key: the consequence first; then the old key is refused at once and shows as refused.
  await page.getByRole('button', { name: 'Rotate public key…' }).click();
  assert.match(await page.getByRole('alertdialog').textContent(), /old key is refused from now on.*on every page/s);
  assert.deepEqual(await axe(page), [], 'confirmation: axe-core found serious or critical violations');
  await page.getByRole('button', { name: 'Rotate public key', exact: true }).click();
  await page.getByText('The public key was rotated').waitFor();
  const rotated = (await api(`/api/admin/sources/${id}`)).source;
  assert.notEqual(rotated.publicKey, source.publicKey);
  assert.equal(await page.getByTestId('public-key').textContent(), rotated.publicKey);
  const old = await collect(allowed, source.publicKey);
  assert.equal(old.status, 401);
  assert.equal(old.body.error, 'tracking_source_unavailable');
  await page.getByTestId('refused-keys').getByText(/a rotated public key/).waitFor({ timeout: 30000 });

  // Rotate the private key: the new one is shown once, the old one is refused.
  await page.getByRole('button', { name: 'Rotate private key…' }).click();
  assert.match(await page.getByRole('alertdialog').textContent(), /REVTRACK_TRACKER_SK/);
  await page.getByRole('button', { name: 'Rotate private key', exact: true }).click();
  await page.getByTestId('private-key-once').waitFor();
  const sk2 = await page.getByTestId('private-key').inputValue();
  assert.ok(sk2.startsWith('tracker_sk_') && sk2 !== sk);
  process.env.REVTRACK_TRACKER_PK = rotated.publicKey;
  await assert.rejects(snippet.sendVerifiedEvent(snippet.verifiedEvent(session, { name: 'paid', shop: 'x.myshopify.com', amountCents: 100, currency: 'USD' })), /401/);
  process.env.REVTRACK_TRACKER_SK = sk2;
  assert.equal((await snippet.sendVerifiedEvent(snippet.verifiedEvent(session, { name: 'qualified', shop: `sources-${acq.slice(0, 8)}.myshopify.com` }))).accepted, true);

  // Disable: events are refused; enable: accepted again.
  await page.getByRole('button', { name: 'Disable source…' }).click();
  assert.match(await page.getByRole('alertdialog').textContent(), /refused from now on/);
  await page.getByRole('button', { name: 'Disable source', exact: true }).click();
  await page.getByTestId('source-state').getByText(/^disabled/).waitFor();
  assert.equal((await api(`/api/admin/sources/${id}`)).source.enabled, false);
  const whileOff = await collect(allowed, rotated.publicKey);
  assert.equal(whileOff.status, 401);
  assert.equal(whileOff.body.error, 'tracking_source_unavailable');
  await page.getByTestId('refused-keys').getByText(/the source is disabled/).waitFor({ timeout: 30000 });
  await page.getByRole('button', { name: 'Enable source…' }).click();
  await page.getByRole('button', { name: 'Enable source', exact: true }).click();
  await page.getByTestId('source-state').getByText(/^enabled/).waitFor();
  assert.equal((await collect(allowed, rotated.publicKey)).status, 202);

  // The fix for the refused origin: the allowed origins, validated as at creation (the API's message at the field).
  const badList = [allowed, `${other}/x`];
  const r = await fetch(`${env.url}/api/admin/sources/${id}`, { method: 'PATCH', headers: { authorization: `Bearer ${env.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ allowedOrigins: badList }) });
  assert.equal(r.status, 400);
  const originsField = page.getByLabel(/Allowed origins of this source/);
  await originsField.fill(badList.join('\n'));
  await page.getByRole('button', { name: 'Save allowed origins' }).click();
  await page.locator('#edit-origins-error').waitFor();
  assert.equal(await page.locator('#edit-origins-error').textContent(), (await r.json()).message);
  await originsField.fill(`${allowed}\n${other}`);
  await page.getByRole('button', { name: 'Save allowed origins' }).click();
  await page.getByText(/Allowed origins saved/).waitFor();
  const fixed = (await api(`/api/admin/sources/${id}`)).source;
  assert.deepEqual([...fixed.allowedOrigins].sort(), [allowed, other].sort());
  assert.equal(await page.getByTestId('source-origins').textContent(), fixed.allowedOrigins.join(' '));
  assert.equal((await collect(other, rotated.publicKey)).status, 202, 'the added origin is accepted at once');
  assert.deepEqual(problems, []);
  await context.close();
});

test('Sources as a member (the owner in the second workspace): the list only, and the server refuses creation too', async () => {
  const { context, page, problems } = await newPage(browser);
  await signIn(page, '#/sources');
  await page.evaluate(() => localStorage.setItem('revtrack.workspace', 'second'));
  await page.reload();
  await page.getByRole('heading', { name: 'Tracking sources' }).waitFor();
  await page.getByTestId('sources-empty').or(page.getByTestId('sources')).first().waitFor();
  assert.equal(await page.getByTestId('create-source').count(), 0);
  assert.match(await page.locator('main').textContent(), /Owners and admins create and change sources; you can read them\./);
  const refusal = await page.evaluate(async () => {
    const s = await (await fetch('/api/admin/session')).json();
    const r = await fetch('/api/admin/sources', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Revtrack-Workspace': 'second', 'X-CSRF-Token': s.csrfToken },
      body: JSON.stringify({ appId: 'demo-reviews', allowedOrigins: ['https://member.example.com'] }) });
    return { status: r.status, body: await r.json() };
  });
  assert.equal(refusal.status, 403);
  assert.equal(refusal.body.error, 'forbidden');
  assert.deepEqual(await axe(page), [], 'sources (member): axe-core found serious or critical violations');
  assert.deepEqual(problems, []);
  await context.close();
});
