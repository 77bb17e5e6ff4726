// Settings in Debian's Chromium against a real `revtrack all` with the demo data (console/
// browser_test.go starts it; harness.mjs says what each variable is): API and MCP keys, the AI
// assistant panel's connection test, the partner connection and exclusions, the audit log, and
// what a member sees. Each screen's rows are compared with the admin API's answer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, axe, env, launch, newPage, screenshot, signIn } from './harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// The same formatting as the console's formatTimestamp (src/format.ts).
const stamp = (iso) => (iso ? new Date(iso).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC' : '—');
// The partner API fake's token (devtools/partnerfake DefaultServerConfig), which the demo is connected with.
const FAKE_PARTNER_TOKEN = 'prtapi_fake_partner_token';
const keyName = `settings browser test ${Date.now()}`;
let keyValue = '';

// open signs in on a fresh page (clipboard allowed, for the Copy buttons) in the demo workspace.
async function open(hash, slug = 'demo') {
  const p = await newPage(browser);
  await p.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.url });
  await signIn(p.page, hash);
  await p.page.getByLabel('Workspace').selectOption(slug);
  return p;
}

async function noSeriousViolations(page, screen) {
  assert.deepEqual(await axe(page), [], `${screen}: axe-core found serious or critical violations`);
}

async function keyRow(page, id) { return page.locator(`[data-testid="keys"] tr[data-key-id="${id}"]`); }

// mcpTools lists the MCP server's tools as a client does, for comparing with the screen.
async function mcpTools(key) {
  const h = { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(`${env.url}/api/mcp`, { method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'browsertest', version: '1' } } }) });
  const hello = await init.json();
  const list = await fetch(`${env.url}/api/mcp`, { method: 'POST', headers: { ...h, 'mcp-session-id': init.headers.get('mcp-session-id') },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
  return { info: hello.result.serverInfo, tools: (await list.json()).result.tools.map((t) => t.name) };
}

test('keys: the list is the API\'s; a new key is shown once with Copy; it is used (last used), tested over MCP, then revoked and refused at once', async () => {
  const want = await api('/api/admin/keys');
  const { context, page, problems } = await open('#/settings/keys');
  await page.getByTestId('keys').waitFor();
  for (const k of want.keys) {
    const cells = await (await keyRow(page, k.id)).locator('td').allTextContents();
    assert.deepEqual(cells.slice(0, 4), [k.scope, stamp(k.createdAt), k.lastUsedAt ? stamp(k.lastUsedAt) : 'never', k.revokedAt ? `revoked ${stamp(k.revokedAt)}` : 'active'], k.name);
  }
  // A refusal goes next to its field: the API requires a name.
  await page.getByRole('button', { name: 'Create key' }).click();
  const nameError = page.locator('#key-name-error');
  await nameError.waitFor();
  assert.match(await nameError.textContent(), /Name/);
  assert.equal(await page.getByLabel(/^Key name/).getAttribute('aria-describedby'), 'key-name-error');

  await page.getByLabel(/^Key name/).fill(keyName);
  await page.getByRole('button', { name: 'Create key' }).click();
  const value = page.getByTestId('new-key-value');
  await value.waitFor();
  keyValue = await value.inputValue();
  assert.match(keyValue, /^revtrack_sk_/);
  assert.match(await page.getByTestId('new-key').textContent(), /you will not see this again/);
  await page.getByRole('button', { name: 'Copy the new key' }).click();
  await page.getByTestId('new-key').getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), keyValue);
  const created = (await api('/api/admin/keys')).keys.find((k) => k.name === keyName);
  assert.ok(created && created.lastUsedAt === null);
  await (await keyRow(page, created.id)).waitFor();
  assert.equal(await (await keyRow(page, created.id)).locator('td').nth(2).textContent(), 'never');
  await screenshot(page, 'settings-keys');
  await noSeriousViolations(page, 'settings keys');

  // The key reads the REST API; the list then says when (the API's time, to the minute).
  await api('/api/v1/summary', {}, keyValue);
  const used = (await api('/api/admin/keys')).keys.find((k) => k.id === created.id);
  assert.ok(used.lastUsedAt, 'the key check recorded the use');
  await page.getByRole('link', { name: 'AI assistant', exact: true }).click();

  // The AI assistant panel: the configurations carry the new key; the connection test speaks MCP.
  await page.getByTestId('config-cursor').waitFor();
  assert.equal(await page.getByTestId('mcp-url').inputValue(), `${env.url}/api/mcp`);
  assert.match(await page.getByTestId('config-cursor').textContent(), new RegExp(`"Authorization": "Bearer ${keyValue}"`));
  const mcp = await mcpTools(keyValue);
  await page.getByLabel(/^Key to test with/).fill(keyValue.slice(0, -1) + 'x');
  await page.getByRole('button', { name: 'Test connection' }).click();
  assert.match(await page.getByRole('alert').filter({ hasText: 'refused the key' }).textContent(), /\(401\)/);
  await page.getByLabel(/^Key to test with/).fill(keyValue);
  await page.getByRole('button', { name: 'Test connection' }).click();
  const result = page.getByTestId('mcp-test-result').filter({ hasText: 'Connected' });
  await result.waitFor();
  assert.match(await result.textContent(), new RegExp(`^Connected to ${mcp.info.name} ${mcp.info.version} \\(protocol [0-9-]+\\): ${mcp.tools.length} tools \\(${mcp.tools.join(', ')}\\)\\.$`));
  console.log(`CONSOLE settings_mcp_tools=${mcp.tools.length}`);
  await screenshot(page, 'settings-assistant');
  await noSeriousViolations(page, 'settings assistant');

  await page.getByRole('link', { name: 'API and MCP keys' }).click();
  const row = await keyRow(page, created.id);
  await row.waitFor();
  assert.equal(await row.locator('td').nth(2).textContent(), stamp(used.lastUsedAt));
  await page.getByRole('button', { name: `Revoke ${keyName}` }).click();
  const dialog = page.getByRole('alertdialog');
  await dialog.waitFor();
  await noSeriousViolations(page, 'settings keys, revoke confirmation');
  await dialog.getByRole('button', { name: 'Revoke the key' }).click();
  await page.getByRole('status').filter({ hasText: 'is revoked' }).waitFor();
  // Invalid at once: the next request with it is refused.
  const after = await fetch(`${env.url}/api/v1/summary`, { headers: { authorization: `Bearer ${keyValue}` } });
  assert.equal(after.status, 401);
  await row.locator('td', { hasText: /^revoked / }).waitFor();
  assert.equal(await row.getByRole('button').count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test('workspace: the partner connection and last sync are the API\'s; exclude and lift a shop; disconnect and connect again with a pasted token', async () => {
  const { context, page, problems } = await open('#/settings/workspace');
  const conn = (await api('/api/admin/partner-connection')).partnerConnection;
  const last = (await api('/api/admin/sync-runs', { limit: '1' })).runs[0];
  assert.equal(await page.getByTestId('partner-connected').textContent(), `connected to organization ${conn.organizationId}`);
  assert.match(await page.getByTestId('partner-last-sync').textContent(), new RegExp(`^${last.appId}: ${last.status}, started ${stamp(last.startedAt)}`));
  assert.equal(await page.getByLabel(/access token/).inputValue(), '', 'the token is never shown');

  // Exclusions: a refused domain is shown next to its field; then a test store is excluded and lifted.
  const shop = `settings-test-${Date.now()}.myshopify.com`;
  await page.getByLabel(/^Shop domain/).fill('not a domain');
  await page.getByRole('button', { name: 'Exclude' }).click();
  await page.locator('#excl-shop-error').waitFor();
  await page.getByLabel(/^Shop domain/).fill(shop);
  await page.getByLabel(/^Reason/).fill('a test store');
  await page.getByRole('button', { name: 'Exclude' }).click();
  await page.getByRole('status').filter({ hasText: `${shop} is excluded from every app` }).waitFor();
  const rule = (await api('/api/admin/customer-exclusions')).exclusions.find((x) => x.shopDomain === shop);
  assert.equal(rule.reason, 'a test store');
  const row = page.getByTestId('exclusions').locator('tr', { hasText: shop });
  await row.waitFor(); // the list is read again after the change
  assert.deepEqual((await row.locator('td').allTextContents()).slice(0, 4), ['every app', 'excluded', 'a test store', stamp(rule.updatedAt)]);
  await screenshot(page, 'settings-workspace');
  await noSeriousViolations(page, 'settings workspace');
  await page.getByRole('button', { name: `Lift the exclusion of ${shop}` }).click();
  await page.getByLabel(/^Reason for lifting/).fill('test over');
  await page.getByRole('alertdialog').getByRole('button', { name: 'Lift the exclusion' }).click();
  await page.getByRole('status').filter({ hasText: `${shop} counts again` }).waitFor();
  await row.waitFor({ state: 'detached' });
  assert.equal((await api('/api/admin/customer-exclusions')).exclusions.some((x) => x.shopDomain === shop), false);

  // Disconnect (after any running sync ends, which needs the token) and connect again.
  for (let i = 0; i < 120 && (await api('/api/admin/sync-runs', { limit: '20' })).runs.some((r) => r.status === 'running'); i++) await new Promise((r) => setTimeout(r, 500));
  await page.getByRole('button', { name: 'Disconnect' }).click();
  await page.getByRole('alertdialog').getByRole('button', { name: 'Disconnect' }).click();
  await page.getByTestId('partner-connected').filter({ hasText: 'not connected' }).waitFor();
  assert.equal((await fetch(`${env.url}/api/admin/partner-connection`, { headers: { authorization: `Bearer ${env.apiKey}` } })).status, 404);
  await page.getByLabel(/^Organization ID/).fill(conn.organizationId);
  await page.getByLabel(/^Partner API access token/).fill('has a space');
  await page.getByRole('button', { name: 'Connect' }).click();
  await page.locator('#partner-token-error').waitFor();
  await page.getByLabel(/^Partner API access token/).fill(FAKE_PARTNER_TOKEN);
  await page.getByRole('button', { name: 'Connect' }).click();
  await page.getByTestId('partner-connected').filter({ hasText: `connected to organization ${conn.organizationId}` }).waitFor();
  assert.equal(await page.getByLabel(/access token/).inputValue(), '', 'the pasted token is cleared');
  assert.equal((await api('/api/admin/partner-connection')).partnerConnection.organizationId, conn.organizationId);
  assert.deepEqual(problems, []);
  await context.close();
});

test('audit log: the page is the API\'s; filters by action and who; pages; shows what the tests above did', async () => {
  const { context, page, problems } = await open('#/settings/audit');
  const table = page.getByTestId('audit');
  const shown = async () => ({ whens: await table.locator('tbody th').allTextContents(),
    actions: await table.locator('tbody tr').evaluateAll((rs) => rs.map((r) => r.dataset.action)) });
  // The API's page, then the screen's (read again): an entry written in between by the running
  // stack (a background job's audit) would differ, so the pair is taken again, at most three times.
  let first, got;
  for (let i = 0; i < 3; i++) {
    first = await api('/api/admin/audit', { limit: '25' });
    await page.reload();
    await table.waitFor();
    got = await shown();
    if (got.actions.join() === first.entries.map((e) => e.action).join()) break;
  }
  assert.deepEqual(got, { whens: first.entries.map((e) => stamp(e.at)), actions: first.entries.map((e) => e.action) });
  if (first.nextCursor) {
    const second = await api('/api/admin/audit', { limit: '25', cursor: first.nextCursor });
    await page.getByRole('button', { name: 'Older' }).click();
    await page.getByRole('table', { name: /page 2/ }).waitFor();
    assert.deepEqual(await table.locator('tbody tr').evaluateAll((rs) => rs.map((r) => r.dataset.action)), second.entries.map((e) => e.action));
    await page.getByRole('button', { name: 'Newer' }).click();
  }
  // This file's own actions, by the signed-in owner (named by the members list).
  const session = await page.evaluate(async () => (await fetch('/api/admin/session')).json());
  for (const [action, detail] of [['api_key.revoke', keyName], ['api_key.create', keyName], ['customer.exclude', 'a test store'],
    ['customer.include', 'test over'], ['partner.disconnect', ''], ['partner.connect', '']]) {
    await page.getByLabel(/^Action/).fill(action);
    await page.getByLabel(/^Who/).selectOption(`user:${session.user.id}`);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForFunction((a) => location.hash.includes(`action=${a}`), action);
    const rows = table.locator(`tbody tr[data-action="${action}"]`);
    await rows.first().waitFor();
    assert.match(await rows.first().textContent(), new RegExp(session.user.email.replace(/[.]/g, '\\.')));
    if (detail) assert.match(await rows.first().textContent(), new RegExp(detail), action);
    assert.equal(await table.locator(`tbody tr:not([data-action^="${action}"])`).count(), 0, `only ${action}`);
  }
  await page.getByLabel(/^Action/).fill('api_key');
  await page.getByLabel(/^Who/).selectOption('');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForFunction(() => location.hash === '#/settings/audit?action=api_key');
  await table.locator('tbody tr[data-action="api_key.create"]').first().waitFor();
  await screenshot(page, 'settings-audit');
  await noSeriousViolations(page, 'settings audit');
  // A filter the API refuses says why.
  await page.getByLabel(/^From/).fill('2026-02-02');
  await page.getByLabel(/^To/).fill('2026-02-01');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByRole('alert').filter({ hasText: 'from must not be after to' }).waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test('a member sees the settings read-only, and the server refuses a member\'s change', async () => {
  const { context, page, problems } = await open('#/settings/keys', 'second');
  await page.getByTestId('keys').waitFor();
  // The member's own reading of the list (the workspace's key is read-scoped: the admin API refuses it).
  const keys = await page.evaluate(async () => (await (await fetch('/api/admin/keys', { headers: { 'X-Revtrack-Workspace': 'second' } })).json()).keys);
  assert.deepEqual(await page.getByTestId('keys').locator('tbody th').allTextContents(), keys.map((k) => k.name));
  await page.getByTestId('read-only').waitFor();
  assert.equal(await page.getByRole('button').filter({ hasNotText: 'Sign out' }).count(), 0);
  assert.equal(await page.getByLabel(/^Key name/).count(), 0);
  await noSeriousViolations(page, 'settings keys (member)');
  await page.getByRole('link', { name: 'Workspace', exact: true }).click();
  await page.getByTestId('partner-connected').filter({ hasText: 'not connected' }).waitFor();
  await page.getByText('Ask an owner or admin of this workspace to connect it.').waitFor();
  assert.equal(await page.getByRole('button').filter({ hasNotText: 'Sign out' }).count(), 0);
  await page.getByRole('link', { name: 'Audit log' }).click();
  await page.getByText(/The audit log is for owners and admins/).waitFor();
  await noSeriousViolations(page, 'settings audit (member)');
  const refused = await page.evaluate(async () => {
    const s = await (await fetch('/api/admin/session')).json();
    const h = { 'X-CSRF-Token': s.csrfToken, 'X-Revtrack-Workspace': 'second', 'Content-Type': 'application/json' };
    const key = await fetch('/api/admin/keys', { method: 'POST', headers: h, body: JSON.stringify({ name: 'by a member' }) });
    const audit = await fetch('/api/admin/audit', { headers: h });
    return [key.status, (await key.json()).error, audit.status];
  });
  assert.deepEqual(refused, [403, 'forbidden', 403]);
  assert.deepEqual(problems, []);
  await context.close();
});

test('an admin (not an owner) is refused an admin-scoped key, with the API\'s message under the Scope field; a read key is made', async () => {
  // The owner invites an admin (People's own call, with the session), who accepts in a new browser.
  const owner = await open('#/settings/keys');
  const email = `settings-admin-${Date.now()}@demo.example`;
  const link = await owner.page.evaluate(async (email) => {
    const s = await (await fetch('/api/admin/session')).json();
    const r = await fetch('/api/admin/invitations', { method: 'POST', body: JSON.stringify({ email, role: 'admin' }),
      headers: { 'X-CSRF-Token': s.csrfToken, 'X-Revtrack-Workspace': 'demo', 'Content-Type': 'application/json' } });
    return (await r.json()).link;
  }, email);
  await owner.context.close();
  const { context, page, problems } = await newPage(browser);
  await page.goto(link);
  await page.getByLabel('Your name').fill('Settings Admin');
  await page.getByLabel(/^Password/).fill('an admin password 1');
  await page.getByRole('button', { name: 'Accept and sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  await page.goto(`${env.url}/#/settings/keys`);
  await page.getByTestId('keys').waitFor();
  await page.getByLabel(/^Key name/).fill('wants admin');
  await page.getByLabel(/^Scope/).selectOption('admin');
  await page.getByRole('button', { name: 'Create key' }).click();
  const err = page.locator('#key-scope-error');
  await err.waitFor();
  assert.match(await err.textContent(), /needs the owner role/);
  assert.equal(await page.getByLabel(/^Scope/).getAttribute('aria-describedby'), 'key-scope-error');
  assert.equal(await page.getByTestId('new-key').count(), 0);
  await noSeriousViolations(page, 'settings keys, refused scope');
  await page.getByLabel(/^Scope/).selectOption('read');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByTestId('new-key-value').waitFor();
  assert.equal(await err.count(), 0, 'the refusal goes once the field is right');
  const made = (await api('/api/admin/keys')).keys.find((k) => k.name === 'wants admin');
  assert.equal(made.scope, 'read');
  await page.getByRole('button', { name: 'I have stored it: hide the value' }).click();
  assert.equal(await page.getByTestId('new-key').count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});
