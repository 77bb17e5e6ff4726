// The Acquisition screen in Chromium against the demo data with make run's tracking (console/
// browser_test.go sends it): every cell equals GET /api/v1/attribution's answer, formatted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, axe, count, launch, money, newPage, percent, screenshot, signIn } from './harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const day = (d) => d.toISOString().slice(0, 10);
const today = new Date();
const range = { from: day(new Date(today.getTime() - 89 * 86400000)), to: day(today) };

// What the screen must show for one row of the API's answer, cell by cell (the name aside): the
// funnel table, then one table per currency.
const funnel = (row) => [count(row.acquisitions), count(row.installs), percent(row.installRate), count(row.trialsStarted), percent(row.trialStartRate),
  count(row.trialsConverted), percent(row.trialConversionRate), count(row.customers), count(row.payingCustomers), percent(row.payingRate)];
function revenue(row, c) {
  const m = row.byCurrency[c];
  return m ? [count(m.payingCustomers), money(m.mrrCents, c), money(m.netRevenueCents, c)] : ['—', '—', '—'];
}
const rowsOf = (table) => table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.dataset.kind, [...tr.children].map((c) => c.textContent)]));

test('Acquisition: numbers on screen equal GET /api/v1/attribution\'s (campaigns from the demo tracking, the three other rows explained, tracking coverage above)', async () => {
  const { context, page, problems } = await newPage(browser);
  await signIn(page, `#/acquisition?from=${range.from}&to=${range.to}`);
  const attr = await api('/api/v1/attribution', { ...range, groupBy: 'utm_campaign' });
  const table = page.getByTestId('attribution');
  await table.locator('tbody tr').first().waitFor();
  const campaigns = attr.rows.filter((r) => r.kind === 'channel' && r.key && r.customers > 0);
  assert.ok(campaigns.length >= 3, `the demo tracking credits at least three campaigns: ${JSON.stringify(attr.rows.map((r) => [r.kind, r.key, r.customers]))}`);

  const shown = await rowsOf(table);
  assert.deepEqual(shown.map(([kind, c]) => [kind, c.slice(1)]), attr.rows.map((r) => [r.kind, funnel(r)]));
  for (const [i, r] of attr.rows.entries()) {
    if (r.kind === 'channel' && r.key) assert.equal(shown[i][1][0], r.key);
  }
  assert.ok(attr.currencies.length > 0, 'the demo has revenue');
  for (const c of attr.currencies) {
    const got = await rowsOf(page.getByTestId(`attribution-${c}`));
    assert.deepEqual(got.map(([kind, cells]) => [kind, cells.slice(1)]), attr.rows.map((r) => [r.kind, revenue(r, c)]), `revenue in ${c}`);
  }

  const coverage = await page.getByTestId('tracking-coverage').textContent();
  for (const t of attr.coverage.tracking) assert.ok(coverage.includes(t.appId), `tracking coverage names ${t.appId}: ${coverage}`);
  const legend = await page.getByTestId('attribution-legend').textContent();
  for (const name of ['Unattributed', 'Before tracking', 'No browser history']) assert.ok(legend.includes(name), `the legend explains ${name}`);

  await screenshot(page, 'acquisition');
  assert.deepEqual(await axe(page), [], 'acquisition: axe-core found serious or critical violations');

  // Another dimension: the choice goes to the API.
  await page.getByLabel('Channel by').selectOption('click_id_type');
  await page.waitForFunction(() => location.hash.includes('groupBy=click_id_type'));
  const byClick = await api('/api/v1/attribution', { ...range, groupBy: 'click_id_type' });
  const keys = byClick.rows.filter((r) => r.kind === 'channel').map((r) => r.key);
  await page.getByTestId('attribution').locator('caption', { hasText: 'Click ID type' }).waitFor();
  const names = await page.getByTestId('attribution').locator('tr[data-kind="channel"] th').allTextContents();
  assert.deepEqual(names, keys.map((k) => k || '(none)'));
  assert.deepEqual(problems, []);
  await context.close();
});
