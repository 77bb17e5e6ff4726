// The Ads screen in Chromium against `revtrack all` pointed at the local Google fake (console/
// browser_test.go starts it): the end to end — connect → choose the account → refresh the
// actions → map → a page view with a gclid in a second tab → a verified server event → the queue row
// turns validated on screen → Validation only off → the next one accepted — then Retry of a
// rejected row, the disconnection Google does not confirm (an error with Retry), and the member's
// read-only view. Every number or row on screen is compared with the admin API's answer.
// Env besides harness.mjs's: CONSOLE_GOOGLE_FAKE (the fake's URL, with POST /test/fail-revocation),
// CONSOLE_TRACKER_PK and CONSOLE_TRACKER_SK (the demo source's keys).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { api, axe, env, launch, newPage, screenshot, signIn } from './harness.mjs';

const google = process.env.CONSOLE_GOOGLE_FAKE || '';
const pk = process.env.CONSOLE_TRACKER_PK || '';
const sk = process.env.CONSOLE_TRACKER_SK || '';
// The demo source's allowed origin (revtrack-dev demo-page's address, devtools/devcli/seed.go); the
// test answers it from inside the browser, so nothing listens there.
const demoPage = 'http://127.0.0.1:8090';
const ROW_WAIT = 90_000;

let browser;
before(async () => {
  if (!google || !pk || !sk) throw new Error('CONSOLE_GOOGLE_FAKE, CONSOLE_TRACKER_PK and CONSOLE_TRACKER_SK are required (console/browser_test.go sets them)');
  browser = await launch();
});
after(async () => { await browser?.close(); });

// adminCall sends a state-changing admin request with the demo admin key and returns status and body.
async function adminCall(method, path, body) {
  const r = await fetch(`${env.url}${path}`, { method, headers: { authorization: `Bearer ${env.apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

const noSerious = async (page, screen) => assert.deepEqual(await axe(page), [], `${screen}: axe-core found serious or critical violations`);

// visit opens the demo source's page with a click ID in a second tab, as an ad click lands there,
// and returns the acquisition ID tracker.js gave the visitor once its page view was collected.
async function visit(clickId) {
  // The page the test answers has no address, so Chromium counts it as public and asks before it
  // reaches the loopback address revtrack listens on: this visitor allows it.
  const context = await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', permissions: ['local-network-access'] });
  await context.route(`${demoPage}/**`, (route) => route.fulfill({ contentType: 'text/html', body: `<!doctype html><html lang="en"><head><meta charset="utf-8">
    <title>Upsell Wizard</title><script async src="${env.url}/v1/tracker.js" data-key="${pk}"></script></head><body><h1>Upsell Wizard</h1></body></html>` }));
  const page = await context.newPage();
  // tracker.js sends its batch a second after the page view (and again after a refusal it may retry).
  const answers = [];
  page.on('response', (r) => { if (r.url().startsWith(`${env.url}/v1/collect`)) answers.push(r.status()); });
  page.on('requestfailed', (r) => answers.push(`${r.url()} failed: ${r.failure()?.errorText}`));
  page.on('console', (m) => answers.push(`console ${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => answers.push(`page error: ${e.message}`));
  page.on('response', (r) => { if (r.url().includes('tracker.js')) answers.push(`tracker.js ${r.status()}`); });
  await page.goto(`${demoPage}/install?gclid=${encodeURIComponent(clickId)}`);
  await page.waitForFunction(() => window.tracker && window.tracker.getAcquisitionId, null, { timeout: 15_000 })
    .catch((e) => { throw new Error(`tracker.js did not start on the demo page: ${e.message} ${JSON.stringify(answers)}`); });
  const aid = await page.evaluate(() => window.tracker.getAcquisitionId());
  for (const end = Date.now() + 90_000; !answers.some((s) => s >= 200 && s < 300); await page.waitForTimeout(250)) {
    if (Date.now() > end) throw new Error(`the page view of ${clickId} was not collected: ${JSON.stringify(answers)}`);
  }
  await context.close();
  // The page view goes through Kafka to ClickHouse; the matcher reads the click from there.
  await new Promise((r) => setTimeout(r, 5000));
  return aid;
}

// install sends the publisher's verified server event for the visitor, with a new event ID.
async function install(aid, shop) {
  const r = await fetch(`${env.url}/api/tracking/server-events`, { method: 'POST', headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' },
    body: JSON.stringify({ teamSlug: 'demo', publicKey: pk, eventId: randomUUID(), acquisitionId: aid, name: 'install', customerRef: shop,
      occurredAt: new Date().toISOString() }) });
  assert.ok(r.ok, `server event: ${r.status} ${await r.text()}`);
}

// The queue row of a click as the screen shows it, once it is in the given state.
async function queueRow(page, clickId, status) {
  const row = page.locator(`[data-testid="ads-queue-table"] tr[data-click="${clickId}"][data-status="${status}"]`);
  await row.waitFor({ timeout: ROW_WAIT });
  return row;
}

async function apiRow(mappingId, clickId) {
  const { rows } = await api('/api/admin/ads/queue', { mappingId });
  return rows.find((r) => r.clickId === clickId);
}

test('Ads end to end: connect, account, actions, mapping, a gclid visit and verified events turn validated then accepted on screen, Retry, disconnect', async () => {
  const { context, page, problems } = await newPage(browser);
  await signIn(page, '#/ads');
  await page.getByText('Not connected.').waitFor();
  await noSerious(page, 'ads (not connected)');

  // Connect: this tab goes through the begin link and Google's consent, and the callback page
  // leads back to the console.
  await page.getByRole('button', { name: 'Connect Google Ads' }).click();
  await page.waitForURL(/\/api\/admin\/ads\/oauth\/callback/);
  assert.equal(await page.locator('h1').textContent(), 'Connected');
  await page.getByRole('link', { name: 'Back to the console' }).click();
  await page.getByTestId('ads-state').waitFor();
  const conn = await api('/api/admin/ads/connection');
  assert.equal(conn.state, 'connected');
  assert.equal(await page.getByTestId('ads-state').textContent(), 'connected');
  assert.ok((await page.getByTestId('ads-connection').textContent()).includes(conn.connection.googleAccountEmail));

  // The account: a wrong ID gets the API's own refusal under its field.
  const refused = await adminCall('PUT', '/api/admin/ads/connection/account', { conversionCustomerId: '12345', loginCustomerId: '' });
  assert.equal(refused.status, 400);
  const customer = page.getByLabel('Conversion customer ID (10 digits)');
  await customer.fill('12345');
  await page.getByRole('button', { name: 'Save account' }).click();
  const fieldError = page.locator('#ads-customer-err');
  await fieldError.waitFor();
  assert.equal(await fieldError.textContent(), refused.body.message);
  assert.equal(await customer.getAttribute('aria-describedby'), 'ads-customer-err');
  await customer.fill('1234567890');
  await page.getByLabel('Manager login customer ID (optional)').fill('9876543210');
  await page.getByRole('button', { name: 'Save account' }).click();
  await page.getByText(/^Saved: conversion account 1234567890 through manager 9876543210/).waitFor();
  await page.getByRole('button', { name: 'Refresh conversion actions' }).click();
  const { actions } = await api('/api/admin/ads/conversion-actions');
  await page.getByText(`Refreshed: ${actions.length} conversion action(s).`).waitFor();
  const shownActions = await page.getByTestId('ads-actions').locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.children[0].textContent, tr.children[1].textContent]));
  assert.deepEqual(shownActions, actions.map((a) => [a.id, a.name]));
  assert.ok(actions.some((a) => a.id === '7723667020'), 'the fake lists its click-import action');

  // The mapping: without the confirmations the API refuses, and says so under them.
  await page.getByRole('link', { name: 'Mappings' }).click();
  const form = page.getByTestId('ads-mapping-form');
  await form.waitFor();
  const sources = (await api('/api/admin/sources')).sources;
  const source = sources.find((s) => s.publicKey === pk);
  assert.ok(source, 'the demo source is listed');
  await form.getByLabel('Tracking source').selectOption(source.id);
  await form.getByLabel('Milestone (verified event)').selectOption('install');
  await form.getByLabel('Conversion action').selectOption('7723667020');
  assert.equal(await form.getByLabel(/^Validation only/).isChecked(), true, 'Validation only is on by default');
  const noConsent = await adminCall('POST', '/api/admin/ads/mappings', { sourceId: source.id, milestone: 'install', conversionActionId: '7723667020', consentConfirmed: false });
  assert.equal(noConsent.status, 400);
  await form.getByRole('button', { name: 'Create mapping' }).click();
  await form.locator('#ads-map-consent-err').waitFor();
  assert.equal(await form.locator('#ads-map-consent-err').textContent(), noConsent.body.message);
  await form.getByLabel(/gave consent/).check();
  await form.getByLabel(/processing policies/).check();
  await form.getByRole('button', { name: 'Create mapping' }).click();
  await page.getByTestId('ads-mapping-created').waitFor();
  const mapping = (await api('/api/admin/ads/mappings')).mappings.find((m) => m.enabled && m.sourceId === source.id && m.milestone === 'install');
  assert.ok(mapping && mapping.validationOnly, 'the new mapping is enabled with Validation only on');
  const mappingRow = page.locator(`tr[data-mapping="${mapping.mappingId}"]`);
  await mappingRow.waitFor();
  assert.equal((await mappingRow.getByTestId('validation-only').textContent()).slice(0, 2), 'on');
  await screenshot(page, 'ads-mapping');
  await noSerious(page, 'ads mappings');

  // A visit from an ad click in a second tab, then the publisher's verified install: validated.
  const click1 = `test-click-${randomUUID().slice(0, 8)}`;
  const aid = await visit(click1);
  let sent = Date.now();
  await install(aid, `ads-${click1}.myshopify.com`);
  await page.getByRole('link', { name: 'Upload queue' }).click();
  const validated = await queueRow(page, click1, 'validated');
  const validatedMs = Date.now() - sent;
  const v = await apiRow(mapping.mappingId, click1);
  assert.equal(v.status, 'validated');
  assert.equal(v.clickIdType, 'gclid');
  const cells = await validated.locator('th, td').allTextContents();
  assert.ok(cells[2].startsWith('validated'), cells[2]);
  assert.equal(cells[3], `gclid ${click1}`);

  // The checklist ticks itself up to "validated"; its next step is turning Validation only off.
  await page.getByRole('link', { name: 'Connection and checklist' }).click();
  const list = page.locator(`[data-testid="ads-checklist"][data-mapping="${mapping.mappingId}"]`);
  await list.locator('li[data-step="validated"][data-done="true"]').waitFor({ timeout: 30_000 });
  const verification = (await api('/api/admin/ads/verification')).mappings.find((m) => m.mappingId === mapping.mappingId);
  const ticks = await list.locator('li').evaluateAll((lis) => lis.map((li) => [li.dataset.step, li.dataset.done === 'true']));
  assert.deepEqual(ticks, verification.steps.map((s) => [s.step, s.done]));
  assert.equal(verification.next, 'validation_only_off');
  await screenshot(page, 'ads');
  await noSerious(page, 'ads');

  // Validation only off: the validated row is not replayed; the next install goes live: accepted.
  await page.getByRole('link', { name: 'Mappings' }).click();
  await page.getByRole('button', { name: /Turn off \(upload live\)/ }).click();
  await page.getByTestId('ads-mapping-note').getByText(/not replayed/).waitFor();
  assert.equal((await api('/api/admin/ads/mappings')).mappings.find((m) => m.mappingId === mapping.mappingId).validationOnly, false);
  sent = Date.now();
  await install(aid, `ads-${click1}-2.myshopify.com`);
  await page.getByRole('link', { name: 'Upload queue' }).click();
  const accepted = await queueRow(page, click1, 'accepted');
  // From the server event's 202 to the row's state on screen (matcher, queue, dispatch, 3 s refresh).
  console.log(`ADS validated_on_screen_ms=${validatedMs} accepted_on_screen_ms=${Date.now() - sent}`);
  const acc = (await api('/api/admin/ads/queue', { mappingId: mapping.mappingId, status: 'accepted' })).rows.find((r) => r.clickId === click1);
  assert.ok(acc?.requestId, 'the accepted row has a request ID');
  assert.ok((await accepted.locator('td').nth(5).textContent()).includes(acc.requestId));
  const stillValidated = (await api('/api/admin/ads/queue', { mappingId: mapping.mappingId, status: 'validated' })).rows.filter((r) => r.clickId === click1);
  assert.equal(stillValidated.length, 1, 'the validated row stays validated (not replayed)');

  // A click ID Google refuses: rejected with its reason codes on the row; Retry queues it again.
  const bad = `invalid-${randomUUID().slice(0, 8)}`;
  await install(await visit(bad), `ads-${bad}.myshopify.com`);
  await page.getByLabel('State').selectOption('rejected');
  await page.waitForFunction(() => location.hash.includes('status=rejected'));
  const rowId = await (await queueRow(page, bad, 'rejected')).getAttribute('data-row');
  await page.getByLabel('State').selectOption('');
  const rejected = page.locator(`[data-testid="ads-queue-table"] tr[data-row="${rowId}"]`);
  const rj = await apiRow(mapping.mappingId, bad);
  assert.equal(rj.status, 'rejected');
  const diagnosis = await rejected.locator('td.ads-diagnosis').textContent();
  for (const code of rj.reasonCodes) assert.ok(diagnosis.includes(code), `reason code ${code} on the row: ${diagnosis}`);
  assert.ok(diagnosis.includes(rj.diagnosis.hint));
  await rejected.getByRole('button', { name: /Retry/ }).click();
  await rejected.getByRole('status').getByText(/Queued again/).waitFor();
  // Sent again at the next dispatch, and refused again by Google (the API said queued once the
  // Retry answered): rejected, and the screen follows, the Retry's note gone.
  for (const end = Date.now() + ROW_WAIT; (await apiRow(mapping.mappingId, bad)).status !== 'rejected'; await page.waitForTimeout(500)) {
    assert.ok(Date.now() < end, 'the retried row was not sent again');
  }
  await rejected.getByRole('status').waitFor({ state: 'detached', timeout: 30_000 });
  assert.equal(await rejected.getAttribute('data-status'), 'rejected');
  await screenshot(page, 'ads-queue');
  await noSerious(page, 'ads queue');

  // Disconnect: Google does not confirm the revocation → an error with Retry, still connected.
  await page.getByRole('link', { name: 'Connection and checklist' }).click();
  assert.equal((await fetch(`${google}/test/fail-revocation?status=503`, { method: 'POST' })).status, 200);
  await page.getByRole('button', { name: 'Disconnect…' }).click();
  await page.getByRole('group', { name: /Disconnect Google Ads\?/ }).getByRole('button', { name: 'Disconnect', exact: true }).click();
  const note = page.getByTestId('ads-connection-note');
  await note.getByRole('button', { name: 'Retry disconnect' }).waitFor();
  assert.equal(await note.getAttribute('role'), 'alert');
  assert.equal((await api('/api/admin/ads/connection')).state, 'connected');
  assert.ok((await note.textContent()).length > 0);
  await noSerious(page, 'ads (revocation unconfirmed)');
  await fetch(`${google}/test/fail-revocation?status=0`, { method: 'POST' });
  await note.getByRole('button', { name: 'Retry disconnect' }).click();
  await page.getByTestId('ads-connection-note').getByText(/^Disconnected/).waitFor();
  await page.getByText('Not connected.').waitFor();
  assert.equal((await api('/api/admin/ads/connection')).state, 'disconnected');
  // The 502 of the unconfirmed revocation is logged by the browser as a failed resource: an answer.
  assert.deepEqual(problems.filter((p) => !/status of 502/.test(p)), []);
  await context.close();
});

test('Ads for a member: every view read-only (no connect, account form, mapping form, toggle or Retry)', async () => {
  const { context, page, problems } = await newPage(browser);
  await signIn(page, '#/ads');
  await page.getByLabel('Workspace').selectOption('second');
  await page.getByTestId('ads-read-only').waitFor();
  await page.getByText('Not connected.').waitFor();
  assert.equal(await page.getByRole('button', { name: /Connect|Disconnect|Save account|Refresh/ }).count(), 0);
  await noSerious(page, 'ads (member)');
  await page.getByRole('link', { name: 'Mappings' }).click();
  await page.getByRole('heading', { name: 'Mappings' }).waitFor();
  assert.equal(await page.getByTestId('ads-mapping-form').count(), 0);
  assert.equal(await page.getByRole('button', { name: /Turn/ }).count(), 0);
  await page.getByRole('link', { name: 'Upload queue' }).click();
  await page.getByTestId('ads-queue-empty').waitFor();
  assert.equal(await page.getByRole('button', { name: /Retry/ }).count(), 0);
  await noSerious(page, 'ads queue (member)');
  // The server refuses the member too.
  const refused = await page.evaluate(async () => {
    const { csrfToken } = await (await fetch('/api/admin/session')).json();
    const r = await fetch('/api/admin/ads/connection', { method: 'POST', headers: { 'X-Revtrack-Workspace': 'second', 'X-CSRF-Token': csrfToken } });
    return [r.status, (await r.json()).message];
  });
  assert.equal(refused[0], 403);
  assert.match(refused[1], /admin role/);
  assert.deepEqual(problems, []);
  await context.close();
});
