// The console in Debian's Chromium against a real `revtrack all` with the demo data (console/
// browser_test.go starts it and sets the env; harness.mjs says what each variable is).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { api, axe, count, env, initialJS, launch, money, newPage, percent, screenshot, signIn } from './harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const day = (d) => d.toISOString().slice(0, 10);
const today = new Date();
const range = { from: day(new Date(today.getTime() - 89 * 86400000)), to: day(today) };
const rangeHash = `from=${range.from}&to=${range.to}`;

// open signs in on a fresh page at the screen; the caller closes the context.
async function open(hash) {
  const p = await newPage(browser);
  await signIn(p.page, hash);
  return p;
}

async function noSeriousViolations(page, screen) {
  assert.deepEqual(await axe(page), [], `${screen}: axe-core found serious or critical violations`);
}

// trySignIn submits the form and returns the refusal shown once the server has answered.
async function trySignIn(page, email, password) {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/session' && r.request().method() === 'POST'),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor(); // not "Signing in…"
  return page.getByRole('alert').textContent();
}

test('sign-in: a wrong password and an unknown e-mail get the same refusal; the right password signs in; sign-out ends the session', async () => {
  const { context, page, problems } = await newPage(browser);
  await page.goto(`${env.url}/`);
  await screenshot(page, 'sign-in');
  await noSeriousViolations(page, 'sign-in');
  const wrong = await trySignIn(page, env.email, env.password + 'x');
  const unknown = await trySignIn(page, 'nobody-here@demo.example', env.password);
  assert.match(wrong, /\S/);
  assert.equal(unknown, wrong, 'one message for both: no user enumeration');
  await page.getByLabel('Password').fill(env.password);
  await page.getByLabel('E-mail').fill(env.email);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  const cookies = await context.cookies();
  const c = cookies.find((x) => x.name === 'revtrack_session');
  assert.ok(c && c.httpOnly && c.sameSite === 'Strict', 'the session cookie is HttpOnly and SameSite=Strict');
  // A state-changing request without the CSRF token is refused, even with the cookie.
  const csrf = await page.evaluate(async () => (await fetch('/api/admin/session', { method: 'DELETE' })).status);
  assert.equal(csrf, 403);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  // The session ended on the server: a reload stays signed out, and the old cookie reads nothing.
  await page.reload();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  const after = await fetch(`${env.url}/api/v1/summary`, { headers: { cookie: `revtrack_session=${c.value}` } });
  assert.equal(after.status, 401);
  assert.deepEqual(problems, []);
  await context.close();
});

test('sign-in: repeated failures for one e-mail are throttled (429) and the page says when to retry', async () => {
  const { context, page } = await newPage(browser);
  await page.goto(`${env.url}/`);
  let text = '';
  for (let i = 0; i < 8 && !/again in/.test(text); i++) text = await trySignIn(page, 'throttled@demo.example', 'not the password');
  assert.match(text, /again in \d+ s/);
  await context.close();
});

test('a session ended elsewhere sends the page back to sign-in', async () => {
  const { context, page } = await open(`#/overview?${rangeHash}`);
  // Another tab of the same browser signs out (the cookie is shared, the session ends on the server).
  const other = await context.newPage();
  await other.goto(`${env.url}/#/account`);
  await other.getByRole('button', { name: 'Sign out' }).click();
  await other.getByRole('button', { name: 'Sign in' }).waitFor();
  await page.getByRole('link', { name: 'Customers' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  await context.close();
});

test('an invitation link signs a new member in once (who then changes the password in My account); the same link is refused after', async () => {
  const { context, page, problems } = await newPage(browser);
  assert.match(env.inviteLink, /\/#\/accept-invitation\?token=/, 'the token travels in the fragment');
  await page.goto(env.inviteLink);
  await page.getByRole('heading', { name: 'Accept the invitation' }).waitFor();
  await screenshot(page, 'accept-invitation');
  await noSeriousViolations(page, 'accept invitation');
  await page.getByLabel('Your name').fill('Invited Member');
  await page.getByLabel(/^Password/).fill('a fine new password 1');
  await page.getByRole('button', { name: 'Accept and sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  assert.match(await page.getByLabel('Workspace').locator('option:checked').textContent(), /\(member\)/);
  // My account: the new member changes the password; the new one then signs in.
  await page.getByRole('link', { name: 'Invited Member' }).click();
  await page.getByLabel('Current password').fill('a fine new password 1');
  await page.getByRole('textbox', { name: /^New password/ }).fill('a changed password 4');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByRole('status').filter({ hasText: 'Password changed' }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('E-mail').fill('invited@demo.example');
  await page.getByLabel('Password').fill('a changed password 4');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.goto(env.inviteLink);
  await page.getByLabel('Your name').fill('Invited Again');
  await page.getByLabel(/^Password/).fill('another new password 2');
  await page.getByRole('button', { name: 'Accept and sign in' }).click();
  await page.getByRole('alert').waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test('a password-reset link sets a new password, which then signs in', async () => {
  const { context, page, problems } = await newPage(browser);
  await page.goto(env.resetLink);
  await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
  await screenshot(page, 'reset-password');
  await noSeriousViolations(page, 'reset password');
  await page.getByRole('textbox', { name: /^New password/ }).fill('the reset password 3');
  await page.getByRole('button', { name: 'Set the password' }).click();
  await page.getByRole('status').filter({ hasText: 'password is set' }).waitFor();
  await page.getByRole('button', { name: 'Go to sign-in' }).click();
  await page.getByLabel('E-mail').fill(env.resetEmail);
  await page.getByLabel('Password').fill('the reset password 3');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  // Role limits: a member sees the sync runs but no way to start one, and the API refuses it even
  // with the session's own CSRF token.
  await page.getByRole('link', { name: 'Sync' }).click();
  await page.getByTestId('sync-runs').waitFor();
  assert.equal(await page.getByRole('button', { name: /Start a sync/ }).count(), 0);
  const status = await page.evaluate(async () => {
    const s = await (await fetch('/api/admin/session')).json();
    const r = await fetch('/api/admin/sync-runs', { method: 'POST', headers: { 'X-CSRF-Token': s.csrfToken, 'Content-Type': 'application/json' }, body: '{}' });
    return r.status;
  });
  assert.equal(status, 403);
  // ... and sees the people of the workspace without any owner's action.
  await page.getByRole('link', { name: 'People' }).click();
  await page.getByTestId('members').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Invite', exact: true }).count(), 0);
  assert.equal(await page.getByTestId('members').locator('select').count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test('Overview shows every currency\'s numbers exactly as GET /api/v1/summary answers them', async () => {
  const { context, page, problems } = await open(`#/overview?${rangeHash}`);
  const summary = await api('/api/v1/summary', range);
  assert.ok(summary.currencies.length > 0, 'the demo data has paying customers');
  await page.locator(`[data-testid="kpi-${summary.currencies[0]}-mrrCents"]`).waitFor();
  const money_ = ['mrrCents', 'arrCents', 'arpuCents'];
  const pct = ['netRevenueRetentionRate', 'largestCustomerShare', 'topFiveCustomerShare', 'topTenCustomerShare'];
  let checked = 0;
  for (const c of summary.currencies) {
    const b = summary.byCurrency[c];
    for (const f of [...money_, 'payingCustomers', ...pct]) {
      const el = page.locator(`[data-testid="kpi-${c}-${f}"]`);
      const want = money_.includes(f) ? money(b[f], c) : f === 'payingCustomers' ? count(b[f]) : percent(b[f]);
      assert.equal(await el.getAttribute('data-value'), b[f] === null ? 'null' : String(b[f]), `${c} ${f} value`);
      assert.equal(await el.textContent(), want, `${c} ${f} as shown`);
      checked++;
    }
  }
  console.log(`CONSOLE overview_numbers_checked=${checked} currencies=${summary.currencies.join(',')}`);
  await page.locator('figure.chart canvas').first().waitFor();
  await page.getByTestId('coverage').waitFor();
  if (summary.staleDataWarning) await page.getByTestId('stale-warning').waitFor();
  await screenshot(page, 'overview');
  await noSeriousViolations(page, 'overview');
  assert.deepEqual(problems, []);
  await context.close();
});

test('Overview: time to visible data after navigation (measured, not asserted)', async () => {
  const { context, page } = await open(`#/account`);
  const summary = await api('/api/v1/summary', range);
  // A fresh navigation to the Overview, signed in (the cookie): from navigation start to the first
  // number shown. about:blank first, so that the goto loads the document anew (not a hash change).
  await page.goto('about:blank');
  await page.goto(`${env.url}/#/overview?${rangeHash}`);
  await page.locator(`[data-testid="kpi-${summary.currencies[0]}-mrrCents"]`).waitFor();
  const ms = await page.evaluate(() => Math.round(performance.now()));
  await page.locator('figure.chart canvas').first().waitFor();
  const chartMs = await page.evaluate(() => Math.round(performance.now()));
  // Where the time went: each request's start and end after navigation start.
  const timings = await page.evaluate(() => performance.getEntriesByType('resource')
    .map((e) => `${new URL(e.name).pathname.replace(/^\/api\/v1\//, '')}@${Math.round(e.startTime)}-${Math.round(e.responseEnd)}`));
  console.log(`CONSOLE overview_requests ${timings.join(' ')}`);
  const { gz, raw, files } = initialJS(fileURLToPath(new URL('../dist', import.meta.url)));
  console.log(`CONSOLE overview_visible_ms=${ms} overview_chart_ms=${chartMs} initial_js_gzip_bytes=${gz} initial_js_bytes=${raw} files=${files.join(',')}`);
  assert.ok(gz <= 250 * 1024, `initial JavaScript is ${gz} bytes gzipped, over the 250 KB budget`);
  await context.close();
});

test('the workspace switcher reads the other workspace, as its own API answers it', async () => {
  const { context, page, problems } = await open(`#/overview?${rangeHash}`);
  const demo = await api('/api/v1/summary', range);
  // The second workspace has no partner connection, so no synced data: its summary is empty.
  const second = await api('/api/v1/summary', range, env.secondKey);
  assert.deepEqual(second.currencies, []);
  const kpi = page.getByTestId(`kpi-${demo.currencies[0]}-mrrCents`);
  await kpi.waitFor();
  const asked = [];
  page.on('request', (r) => { if (r.url().includes('/api/v1/summary')) asked.push(r.headers()['x-revtrack-workspace']); });
  await page.getByLabel('Workspace').selectOption({ label: 'Second Apps Ltd. (member)' });
  await page.getByText('No paying customers in this range.').waitFor();
  assert.equal(await kpi.count(), 0, 'no number of the other workspace stays on screen');
  assert.deepEqual(asked, ['second']);
  // The choice is kept for the next visit; switching back shows the demo's numbers again.
  await page.reload();
  await page.getByText('No paying customers in this range.').waitFor();
  await page.getByLabel('Workspace').selectOption({ label: 'Demo Apps Inc. (owner)' });
  await page.waitForFunction(([sel, want]) => document.querySelector(sel)?.getAttribute('data-value') === want,
    [`[data-testid="kpi-${demo.currencies[0]}-mrrCents"]`, String(demo.byCurrency[demo.currencies[0]].mrrCents)]);
  assert.deepEqual(problems, []);
  await context.close();
});

test('Revenue: the MRR series by month equals GET /api/v1/metrics/mrr?interval=month; movements and cohorts render', async () => {
  const { context, page, problems } = await open(`#/revenue?${rangeHash}&metric=mrr&interval=month`);
  const series = await api('/api/v1/metrics/mrr', { ...range, interval: 'month' });
  const c = series.currencies[0];
  const last = series.points[series.points.length - 1];
  const cell = page.getByTestId(`series-${c}-${last.date}`);
  await cell.waitFor({ state: 'attached' });
  for (const p of series.points) {
    for (const cur of series.currencies) {
      const v = p.byCurrency[cur]?.mrrCents;
      assert.equal(await page.getByTestId(`series-${cur}-${p.date}`).textContent(), v === undefined ? '—' : money(v, cur), `${cur} ${p.date}`);
    }
  }
  await page.getByTestId(`movements-${c}`).waitFor();
  await page.getByTestId(`cohorts-${c}`).waitFor();
  await screenshot(page, 'revenue');
  await noSeriousViolations(page, 'revenue');
  // Click-through: the first linked movement lists its customers.
  const link = page.getByTestId(`movements-${c}`).locator('a').first();
  if (await link.count()) {
    await link.click();
    await page.getByTestId('movers').locator('tbody tr').first().waitFor();
    await screenshot(page, 'revenue-movement-customers');
    await noSeriousViolations(page, 'movement customers');
  }
  assert.deepEqual(problems, []);
  await context.close();
});

test('Customers: the first page is GET /api/v1/customers\' first page; a customer opens with its timeline', async () => {
  const { context, page, problems } = await open(`#/customers?${rangeHash}`);
  const list = await api('/api/v1/customers', { ...range, customerScope: 'included', limit: '50' });
  const rows = page.getByTestId('customers').locator('tbody tr');
  await rows.first().waitFor();
  assert.equal(await rows.count(), list.customers.length);
  assert.equal(await rows.first().locator('td').first().textContent(), list.customers[0].domain);
  await screenshot(page, 'customers');
  await noSeriousViolations(page, 'customers');
  await rows.first().locator('a').click();
  await page.getByTestId('timeline').waitFor();
  await screenshot(page, 'customer-detail');
  await noSeriousViolations(page, 'customer detail');
  assert.deepEqual(problems, []);
  await context.close();
});

// shown is what the Customers screen lists once the API answered: the rows' shop domains, or []
// when it says none match. It waits until the fragment carries the wanted filters and the answer is
// in (a row or the empty state) and the same twice in a row (no answer still on its way).
async function shown(page, hashPart) {
  await page.waitForFunction((h) => location.hash.includes(h), hashPart);
  let last;
  for (const deadline = Date.now() + 15000; Date.now() < deadline; await page.waitForTimeout(200)) {
    const now = await page.evaluate(() => {
      const empty = document.querySelector('[data-testid="customers-empty"]');
      const rows = [...document.querySelectorAll('[data-testid="customers"] tbody tr td:first-of-type')].map((td) => td.textContent);
      return empty ? [] : rows.length ? rows : null;
    });
    if (now && JSON.stringify(now) === JSON.stringify(last)) return now;
    last = now;
  }
  throw new Error(`the Customers screen showed no answer for ${hashPart}`);
}

test('Customers: a search and the paying filter list what GET /api/v1/customers answers for the same query; no match says so', async () => {
  const { context, page, problems } = await open(`#/customers?${rangeHash}`);
  await page.getByTestId('customers').locator('tbody tr').first().waitFor();
  const base = { ...range, customerScope: 'included', limit: '50' };
  const first = await api('/api/v1/customers', base);
  // Part of a listed shop's domain, in upper case: the API searches without case.
  const term = first.customers[0].domain.split('.')[0].slice(0, 5).toUpperCase();
  await page.getByLabel('Search name or shop domain').fill(term);
  const searched = await api('/api/v1/customers', { ...base, q: term });
  assert.ok(searched.customers.length > 0, `the demo data has a shop matching ${term}`);
  assert.deepEqual(await shown(page, `q=${encodeURIComponent(term)}`), searched.customers.map((c) => c.domain));

  for (const [label, value] of [['Paying', 'true'], ['Not paying', 'false']]) {
    await page.getByLabel('Paying').selectOption({ label });
    const want = await api('/api/v1/customers', { ...base, q: term, paying: value });
    assert.deepEqual(await shown(page, `paying=${value}`), want.customers.map((c) => c.domain), `q=${term}&paying=${value}`);
  }
  await screenshot(page, 'customers-search');
  await noSeriousViolations(page, 'customers search');

  await page.getByLabel('Paying').selectOption({ label: 'Any' });
  await page.getByLabel('Search name or shop domain').fill('no-such-shop-anywhere');
  assert.deepEqual(await shown(page, 'q=no-such-shop-anywhere'), []);
  assert.equal(await page.getByTestId('customers-empty').textContent(), 'No customers match these filters.');
  assert.deepEqual(problems, []);
  await context.close();
});

test('My account renders', async () => {
  const { context, page, problems } = await open('#/account');
  await page.getByRole('heading', { name: 'Change password' }).waitFor();
  await screenshot(page, 'account');
  await noSeriousViolations(page, 'account');
  assert.deepEqual(problems, []);
  await context.close();
});

test('Sync: an owner starts a sync from the console and sees it finish', async () => {
  const { context, page, problems } = await open('#/sync');
  const runs = page.getByTestId('sync-runs').locator('tbody tr');
  await runs.first().waitFor();
  const before = await runs.count();
  await page.getByRole('button', { name: /Start a sync/ }).click();
  await page.getByRole('status').filter({ hasText: 'Started' }).waitFor();
  // The page refreshes by itself while a run is running, until none is.
  await page.waitForFunction((n) => {
    const rows = [...document.querySelectorAll('[data-testid="sync-runs"] tbody tr')];
    return rows.length > n && rows.every((r) => r.getAttribute('data-status') !== 'running');
  }, before, { timeout: 120000 });
  await screenshot(page, 'sync');
  await noSeriousViolations(page, 'sync');
  assert.deepEqual(problems, []);
  await context.close();
});

test('People: an owner invites someone (the link is shown), changes a role, makes a reset link and removes a member', async () => {
  const { context, page, problems } = await open('#/people');
  const table = page.getByTestId('members');
  await table.getByRole('cell', { name: 'invited@demo.example', exact: true }).waitFor();
  await page.getByLabel('E-mail of the person to invite').fill('people-test@demo.example');
  await page.getByRole('button', { name: 'Invite', exact: true }).click();
  assert.match(await page.getByTestId('one-time-link').inputValue(), /\/#\/accept-invitation\?token=/);
  await page.getByLabel('Role of reset@demo.example').selectOption('admin');
  await page.getByRole('status').filter({ hasText: 'reset@demo.example is now admin' }).waitFor();
  await page.getByRole('button', { name: 'Reset link for reset@demo.example' }).click();
  assert.match(await page.getByTestId('one-time-link').inputValue(), /\/#\/reset-password\?token=/);
  await screenshot(page, 'people');
  await noSeriousViolations(page, 'people');
  await page.getByRole('button', { name: 'Remove invited@demo.example' }).click();
  await page.getByRole('status').filter({ hasText: 'invited@demo.example was removed' }).waitFor();
  await table.getByRole('cell', { name: 'invited@demo.example', exact: true }).waitFor({ state: 'detached' });
  const members = await (await page.evaluate(async () => (await fetch('/api/admin/members', { headers: { 'X-Revtrack-Workspace': 'demo' } })).json()));
  assert.ok(!members.members.some((m) => m.email === 'invited@demo.example'));
  assert.equal(members.members.find((m) => m.email === 'reset@demo.example').role, 'admin');
  assert.deepEqual(problems, []);
  await context.close();
});
