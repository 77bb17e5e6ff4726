// The Tracking view, an acquisition's journey and the Distribution funnel in Chromium against the
// demo data with make run's tracking (console/browser_test.go sends it): the rows and numbers on
// screen equal the API's; a member of the second workspace (no tracking) sees the empty states.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, axe, count, env, launch, newPage, percent, screenshot, signIn } from './harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const day = (d) => d.toISOString().slice(0, 10);
const today = new Date();
const range = { from: day(new Date(today.getTime() - 179 * 86400000)), to: day(today) };
const frag = (p) => new URLSearchParams(Object.entries(p).filter(([, v]) => v)).toString();

// The events a table shows, as "<evidence> <eventId>", in order.
const shownEvents = (page, testId) => page.getByTestId(testId).locator('tbody tr')
  .evaluateAll((trs) => trs.map((tr) => `${tr.dataset.evidence} ${tr.dataset.event}`));
const ids = (events) => events.map((e) => `${e.evidence} ${e.eventId}`);

// waitEvents waits until the events table shows what the API answers for the same query.
async function waitEvents(page, want) {
  const table = page.getByTestId('tracking-events');
  await table.locator(`tbody tr[data-event="${want[0].eventId}"]`).first().waitFor();
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="tracking-events"] tbody tr').length === n, want.length);
  assert.deepEqual(await shownEvents(page, 'tracking-events'), ids(want));
}

test('Tracking: recent events with their badges, filtered by event name and acquisition, paged, and one journey equal the API\'s', async () => {
  const { context, page, problems } = await newPage(browser);
  await signIn(page, `#/tracking?${frag(range)}`);
  const first = await api('/api/v1/tracking/events', { ...range, limit: 50 });
  assert.ok(first.events.some((e) => e.evidence === 'Browser') && first.events.some((e) => e.evidence === 'Server') || first.nextCursor,
    'the demo tracking has events');
  await waitEvents(page, first.events);
  const badges = await page.getByTestId('tracking-events').locator('tbody tr .badge').allTextContents();
  assert.deepEqual(badges, first.events.map((e) => e.evidence));
  assert.deepEqual(await axe(page), [], 'tracking: axe-core found serious or critical violations');

  // The next page, as the API pages.
  if (first.nextCursor) {
    const second = await api('/api/v1/tracking/events', { ...range, limit: 50, cursor: first.nextCursor });
    await page.getByRole('button', { name: 'Older events' }).click();
    await waitEvents(page, second.events);
    await page.getByRole('button', { name: 'Newer events' }).click();
    await waitEvents(page, first.events);
  }

  // By event name: only verified installs.
  await page.getByLabel('Event name').fill('install');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForFunction(() => location.hash.includes('name=install'));
  const installs = await api('/api/v1/tracking/events', { ...range, limit: 50, name: 'install' });
  assert.ok(installs.events.length > 0 && installs.events.every((e) => e.name === 'install' && e.evidence === 'Server'), 'the demo has verified installs');
  await waitEvents(page, installs.events);

  // By acquisition: the browser of an install that came with browser history.
  const install = installs.events.find((e) => e.acquisitionId && e.firstTouch) ?? installs.events.find((e) => e.acquisitionId);
  assert.ok(install, 'an attributed install');
  await page.getByLabel('Event name').fill('');
  await page.getByLabel('Acquisition ID').fill(install.acquisitionId);
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForFunction((a) => location.hash.includes('acq=' + a) && !location.hash.includes('name='), install.acquisitionId);
  const ofAcq = await api('/api/v1/tracking/events', { ...range, limit: 50, acquisitionId: install.acquisitionId });
  await waitEvents(page, ofAcq.events);
  assert.ok(ofAcq.events.some((e) => e.evidence === 'Browser') || !install.firstTouch, 'a tracked browser\'s page views are listed');
  await screenshot(page, 'tracking');

  // Its journey.
  await page.getByRole('link', { name: `Journey of acquisition ${install.acquisitionId}` }).first().click();
  await page.waitForFunction(() => location.hash.startsWith('#/tracking/acquisitions/'));
  const j = (await api(`/api/v1/tracking/acquisitions/${encodeURIComponent(install.acquisitionId)}`,
    install.acquisitionSourceId ? { sourceId: install.acquisitionSourceId } : {})).journey;
  await page.getByTestId('journey-events').locator('tbody tr').first().waitFor();
  assert.deepEqual(await shownEvents(page, 'journey-events'), ids(j.events));
  const touch = await page.getByTestId('journey-first-touch').textContent();
  if (j.firstTouch) {
    for (const k of ['utmSource', 'utmCampaign', 'gclid', 'gbraid', 'wbraid', 'trackerRef']) {
      if (j.firstTouch[k]) assert.ok(touch.includes(j.firstTouch[k]), `first touch shows ${k}=${j.firstTouch[k]}: ${touch}`);
    }
    assert.ok(touch.includes(j.landingPath || '—'), `landing path ${j.landingPath}`);
    assert.equal(await page.getByTestId('journey-sessions').locator('tbody tr').count(), j.sessions.length);
  } else {
    assert.match(touch, /No browser history/);
  }
  const shops = await page.getByTestId('journey-shops').textContent();
  assert.ok(j.shops.length > 0, 'an install joins a shop');
  for (const s of j.shops) assert.ok(shops.includes(s.shop), `the journey names ${s.shop}`);
  await screenshot(page, 'journey');
  assert.deepEqual(await axe(page), [], 'journey: axe-core found serious or critical violations');
  assert.deepEqual(problems, []);
  await context.close();
});

// The cells a funnel table must show for a group of the API's answer (as FunnelTable computes them).
function funnelCells(g) {
  const first = g.steps[0].acquisitions;
  const rate = (n, of) => percent(of > 0 ? n / of : null);
  const rows = g.steps.map((s, i) => {
    const prev = i === 0 ? null : g.steps[i - 1].acquisitions;
    return [count(s.acquisitions), prev === null ? '—' : rate(s.acquisitions, prev), prev === null ? '—' : count(prev - s.acquisitions), rate(s.acquisitions, first)];
  });
  return [...rows, [count(g.qualified), '—', '—', rate(g.qualified, first)]];
}
const tableCells = (table) => table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((c) => c.textContent)));

test('Funnel: every group\'s steps, conversions and drop-offs equal GET /api/v1/tracking/funnel\'s, by source and by UTM campaign', async () => {
  const { context, page, problems } = await newPage(browser);
  await signIn(page, `#/funnel?${frag({ ...range, groupBy: 'source' })}`);
  for (const [groupBy, label] of [['source', 'Tracking source'], ['utm_campaign', 'First touch: UTM campaign']]) {
    if (groupBy !== 'source') {
      await page.getByLabel('Group by').selectOption(groupBy);
      await page.waitForFunction((g) => location.hash.includes('groupBy=' + g), groupBy);
    }
    const f = (await api('/api/v1/tracking/funnel', { ...range, groupBy })).funnel;
    assert.ok(f.groups.length > 0 && f.groups.some((g) => g.steps[1].acquisitions > 0), `the demo tracking has installs by ${groupBy}`);
    const tables = page.getByTestId('funnel-group');
    await page.locator('[data-testid="funnel-group"] caption', { hasText: label }).first().waitFor();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="funnel-group"]').length === n, f.groups.length);
    for (const [i, g] of f.groups.entries()) {
      const t = tables.nth(i);
      assert.equal(await t.getAttribute('data-group'), g.key);
      assert.deepEqual(await tableCells(t), funnelCells(g), `${groupBy} ${g.key}`);
      if (groupBy === 'utm_campaign') assert.equal(await t.locator('caption').textContent(), `${label}: ${g.key || '(no UTM campaign)'}`);
    }
    if (groupBy === 'source') {
      await screenshot(page, 'funnel');
      assert.deepEqual(await axe(page), [], 'funnel: axe-core found serious or critical violations');
    }
  }
  assert.match(await page.getByTestId('funnel-notes').textContent(), /identified.*never counts as a conversion/s);
  assert.deepEqual(problems, []);
  await context.close();
});

test('Tracking and Funnel as a member of a workspace without tracking: the same read-only screens, with what to do next', async () => {
  assert.ok(env.secondKey, 'CONSOLE_SECOND_KEY');
  const { context, page, problems } = await newPage(browser);
  await signIn(page, `#/tracking?${frag(range)}`);
  await page.getByLabel('Workspace').selectOption({ label: 'Second Apps Ltd. (member)' });
  const events = await api('/api/v1/tracking/events', range, env.secondKey);
  assert.equal(events.events.length, 0, 'the second workspace has no tracking');
  const empty = page.getByTestId('tracking-empty');
  await empty.waitFor();
  assert.match(await empty.textContent(), /no tracking source yet/i);
  assert.equal(await page.getByTestId('tracking-events').count(), 0);
  assert.deepEqual(await axe(page), [], 'tracking (member, empty): axe-core found serious or critical violations');
  await page.getByRole('link', { name: 'Funnel' }).click();
  await page.getByRole('heading', { name: 'Funnel' }).waitFor();
  const f = (await api('/api/v1/tracking/funnel', range, env.secondKey)).funnel;
  assert.equal(f.groups.length, 0);
  await page.getByTestId('tracking-empty').waitFor();
  assert.deepEqual(await axe(page), [], 'funnel (member, empty): axe-core found serious or critical violations');
  await page.getByLabel('Workspace').selectOption({ label: 'Demo Apps Inc. (owner)' });
  assert.deepEqual(problems, []);
  await context.close();
});

// Measured, not asserted: from a fresh navigation to the first row of the events list, the journey
// and the funnel, and what each API call of them took (median of 5 calls by the key, after one).
test('Tracking and Funnel: time to visible data after navigation (measured, not asserted)', async () => {
  const { context, page } = await newPage(browser);
  await signIn(page, '#/account');
  const install = (await api('/api/v1/tracking/events', { ...range, limit: 1, name: 'install' })).events[0];
  const screens = [
    ['tracking', `#/tracking?${frag(range)}`, '[data-testid="tracking-events"] tbody tr'],
    ['journey', `#/tracking/acquisitions/${encodeURIComponent(install.acquisitionId)}`, '[data-testid="journey-events"] tbody tr'],
    ['funnel', `#/funnel?${frag({ ...range, groupBy: 'utm_campaign' })}`, '[data-testid="funnel-group"] tbody tr'],
  ];
  const out = [];
  for (const [name, hash, row] of screens) {
    await page.goto('about:blank');
    await page.goto(`${env.url}/${hash}`);
    await page.locator(row).first().waitFor();
    out.push(`${name}_visible_ms=${await page.evaluate(() => Math.round(performance.now()))}`);
  }
  const median = async (path, params) => {
    await api(path, params);
    const ms = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await api(path, params);
      ms.push(performance.now() - t);
    }
    return Math.round(ms.sort((a, b) => a - b)[2]);
  };
  const first = await api('/api/v1/tracking/events', { ...range, limit: 50 });
  out.push(`events_page1_api_ms=${await median('/api/v1/tracking/events', { ...range, limit: 50 })}`);
  if (first.nextCursor) out.push(`events_page2_api_ms=${await median('/api/v1/tracking/events', { ...range, limit: 50, cursor: first.nextCursor })}`);
  out.push(`events_by_name_api_ms=${await median('/api/v1/tracking/events', { ...range, limit: 50, name: 'paid' })}`);
  out.push(`journey_api_ms=${await median(`/api/v1/tracking/acquisitions/${encodeURIComponent(install.acquisitionId)}`, {})}`);
  out.push(`funnel_api_ms=${await median('/api/v1/tracking/funnel', { ...range, groupBy: 'utm_campaign' })}`);
  console.log(`CONSOLE ${out.join(' ')}`);
  await context.close();
});
