// tracker.js in a real headless Chromium. Every test runs against the real edge (read-back from
// ClickHouse) or, with TRACKER_DEV_COLLECTOR=1, against devcollector.mjs; see harness.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { setup, sleep } from './harness.mjs';

let h;
before(async () => { h = await setup(); });
after(async () => { if (h) await h.close(); });

const HOUR = 3600e3;
const pageViews = (rows) => rows.filter((r) => r.name === 'page_view');

// Ends a test: the script never throws into the page and, without data-debug, never logs.
function quiet(t) {
  assert.deepEqual(t.errors, [], 'page errors');
  assert.deepEqual(t.logs.filter((l) => l.includes('[revtrack]')), [], 'console output from tracker.js');
}

test('page_view on load carries the page context and the acquisition ID', async () => {
  const t = await h.newPage();
  await t.page.goto(h.url('/page.html?utm_source=newsletter'));
  await t.ready();
  const aid = await t.aid();
  assert.match(aid, /^[0-9a-f-]{36}$/);
  const stored = await t.page.evaluate((k) => localStorage.getItem(`rt:${k}:aid`), h.publicKey);
  assert.equal(JSON.parse(stored), aid, 'acquisition ID kept in localStorage under the key namespace');

  const [pv] = await h.waitFor(aid);
  assert.equal(pv.name, 'page_view');
  assert.equal(pv.acquisition_id, aid, 'getAcquisitionId() equals the stored acquisition_id');
  assert.equal(pv.url, h.url('/page.html?utm_source=newsletter'));
  assert.equal(pv.path, '/page.html');
  assert.equal(pv.title, 'Tracker test page');
  assert.equal(pv.returning, false);
  assert.ok(pv.session_id);
  assert.equal(pv.first_utm_source, 'newsletter');
  assert.equal(pv.first_landing_url, pv.url);
  assert.ok(Math.abs(pv.occurred_at - Date.now()) < 60e3, 'occurredAt is the browser clock');
  // One request, as text/plain (no CORS preflight), carrying the public key.
  await waitUntil(() => t.collects.length > 0);
  assert.equal(t.collects.length, 1);
  assert.match(t.collects[0].headers['content-type'], /^text\/plain/);
  assert.equal(JSON.parse(t.collects[0].body).key, h.publicKey);
  quiet(t);
  await t.context.close();
});

// The wire format, pinned: ../testdata/collect-body.golden.json is the body tracker.js sends, with
// IDs, times, key and port replaced. UPDATE_GOLDEN=1 rewrites it; the Go test decodes it strictly.
test('collect body matches the golden file', async () => {
  const t = await h.newPage();
  await t.page.goto(h.url('/embedded.html?utm_source=google&utm_medium=cpc&utm_campaign=spring&gclid=G-1&tracker_ref=partner-7&embedded=1&id_token=IDTOKENSECRET'));
  await t.ready();
  const aid = await t.aid();
  await h.waitFor(aid, (r) => r.some((x) => x.name === 'platform_context'), 'platform_context');
  await t.page.evaluate(() => window.tracker.track('signup_clicked', { plan: 'pro', seats: 3, annual: true }));
  await h.waitFor(aid, (r) => r.length >= 3, 'three events');
  // The browser's request events can trail the collector's answer: wait for the wire capture too.
  await waitUntil(() => t.collects.some((c) => c.body.includes('signup_clicked')));
  const events = t.collects.flatMap((c) => JSON.parse(c.body).batch)
    .filter((e, i, all) => all.findIndex((x) => x.eventId === e.eventId) === i) // a retry is one event
    .sort((a, b) => a.name.localeCompare(b.name));
  const body = { key: JSON.parse(t.collects[0].body).key, batch: events };
  const text = JSON.stringify(body, null, 2)
    .replaceAll(h.publicKey, '<public key>')
    .replaceAll(h.pageOrigin, 'http://127.0.0.1:<page port>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>') + '\n';
  const golden = new URL('../testdata/collect-body.golden.json', import.meta.url);
  if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(golden, text);
  assert.equal(text, fs.readFileSync(golden, 'utf8'), 'wire format changed (UPDATE_GOLDEN=1 to accept)');
  quiet(t);
  await t.context.close();
});

test('SPA: one page_view per URL change, none for replaceState to the same URL, back/forward and hash count', async () => {
  const t = await h.newPage();
  await t.page.goto(h.url('/spa'));
  await t.ready();
  const aid = await t.aid();
  await h.waitFor(aid, (rows) => pageViews(rows).length === 1);
  for (const id of ['push-a', 'push-b', 'replace-same', 'replace-same', 'back', 'forward', 'hash']) {
    await t.page.click('#' + id);
    await sleep(150);
  }
  const want = ['/spa', '/spa/a', '/spa/b', '/spa/a', '/spa/b', '/spa/b#details'].map((p) => h.url(p));
  await h.waitFor(aid, (rows) => pageViews(rows).length >= want.length, 'six page views');
  await h.settle();
  const rows = pageViews(await h.read(aid));
  assert.deepEqual(rows.map((r) => r.url), want);
  assert.equal(rows[1].referrer, h.url('/spa'), 'in-app navigation: the previous page is the referrer');
  assert.equal(new Set(rows.map((r) => r.session_id)).size, 1);
  quiet(t);
  await t.context.close();
});

test('first touch survives reloads and later visits; a new visitor gets its own', async () => {
  const t = await h.newPage();
  const landing = h.url('/page.html?utm_source=google&utm_medium=cpc&utm_campaign=spring&utm_term=t1&utm_content=c1&gclid=G-1&tracker_ref=partner-7');
  await t.page.goto(landing, { referer: 'http://search.example/results?q=apps' });
  await t.ready();
  const aid = await t.aid();
  const firstReferrer = await t.page.evaluate(() => document.referrer);
  await h.waitFor(aid);
  await t.page.reload();
  await h.waitFor(aid, (rows) => rows.length >= 2, 'the reload');
  // A later visit with other UTMs and click IDs: UTMs and gclid stay; gbraid and wbraid were empty.
  await t.page.goto(h.url('/page.html?utm_source=bing&utm_campaign=autumn&gclid=G-2&gbraid=GB-1&wbraid=WB-1'));
  const rows = await h.waitFor(aid, (r) => r.length >= 3, 'the later visit');
  for (const r of rows) {
    assert.equal(r.first_utm_source, 'google');
    assert.equal(r.first_utm_medium, 'cpc');
    assert.equal(r.first_utm_campaign, 'spring');
    assert.equal(r.first_utm_term, 't1');
    assert.equal(r.first_utm_content, 'c1');
    assert.equal(r.first_gclid, 'G-1');
    assert.equal(r.first_tracker_ref, 'partner-7');
    assert.equal(r.first_landing_url, landing);
    assert.equal(r.first_referrer, firstReferrer);
  }
  assert.ok(firstReferrer.startsWith('http://search.example/'), `referrer seen: ${firstReferrer}`);
  assert.equal(rows[0].first_gbraid, '');
  assert.equal(rows[2].first_gbraid, 'GB-1', 'an empty click ID fills in on a later visit');
  assert.equal(rows[2].first_wbraid, 'WB-1');
  assert.match(rows[2].url, /utm_source=bing/);
  assert.equal(new Set(rows.map((r) => r.acquisition_id)).size, 1);
  quiet(t);

  const other = await h.newPage();
  await other.page.goto(h.url('/page.html?utm_source=newsletter'));
  await other.ready();
  const otherAid = await other.aid();
  assert.notEqual(otherAid, aid);
  const [pv] = await h.waitFor(otherAid);
  assert.equal(pv.first_utm_source, 'newsletter');
  assert.equal(pv.first_gclid, '');
  assert.equal(pv.first_tracker_ref, '');
  await t.context.close();
  await other.context.close();
});

test('authentication parameters are stripped from url, landing URL and referrer', async () => {
  const t = await h.newPage();
  const auth = 'hmac=HMACSECRET&id_token=IDTOKENSECRET&code=CODESECRET&state=STATESECRET&timestamp=1700000000' +
    '&host=HOSTSECRET&signature=SIGSECRET&session=SESSIONSECRET&shop=demo-shop.myshopify.com';
  await t.page.goto(h.url(`/page.html?${auth}&utm_source=x&keep=1#access_token=ATSECRET&section=2`));
  await t.ready();
  const aid = await t.aid();
  await h.waitFor(aid);
  await t.page.click('#next'); // same-origin link: document.referrer is the full previous URL
  const rows = await h.waitFor(aid, (r) => r.length >= 2, 'the second page');
  const clean = h.url('/page.html?utm_source=x&keep=1');
  assert.equal(rows[0].url, clean + '#section=2');
  assert.equal(rows[0].first_landing_url, clean + '#section=2');
  assert.equal(rows[1].url, h.url('/page.html?next=1'));
  assert.equal(rows[1].referrer, clean);
  const params = ['hmac=', 'id_token=', 'code=', 'state=', 'timestamp=', 'host=', 'signature=', 'session=', 'shop=', 'access_token='];
  for (const r of rows) {
    for (const col of ['url', 'referrer', 'first_landing_url', 'first_referrer']) {
      for (const p of params) assert.ok(!r[col].includes(p), `${col} keeps ${p}: ${r[col]}`);
    }
  }
  for (const c of t.collects) assert.ok(!/SECRET/.test(c.body), 'an auth value went over the wire');
  assert.ok(!/SECRET/.test(JSON.stringify(rows)));
  quiet(t);
  await t.context.close();
});

test('track() sends a custom event with properties; invalid calls send nothing and never throw', async () => {
  const t = await h.newPage();
  await t.page.goto(h.url('/page.html'));
  await t.ready();
  const aid = await t.aid();
  await t.page.evaluate(() => {
    window.tracker.track('bad name!', {});
    window.tracker.track('x'.repeat(65));
    window.tracker.track('page_view');
    window.tracker.track('listed', ['not', 'an', 'object']);
    window.tracker.track(42);
    const cyclic = {};
    cyclic.self = cyclic;
    window.tracker.track('cyclic', cyclic);
    window.tracker.track('signup_clicked', { plan: 'pro' });
  });
  const rows = await h.waitFor(aid, (r) => r.some((x) => x.name === 'signup_clicked'), 'signup_clicked');
  const ev = rows.find((r) => r.name === 'signup_clicked');
  assert.deepEqual(ev.properties, { plan: 'pro' });
  assert.equal(ev.path, '/page.html');
  await h.settle();
  assert.deepEqual((await h.read(aid)).map((r) => r.name).sort(), ['page_view', 'signup_clicked']);
  quiet(t);
  await t.context.close();
});

test('calls queued before the script loaded are replayed after the first page_view', async () => {
  const t = await h.newPage();
  await t.page.goto(h.url('/stub.html'));
  await t.page.waitForFunction(() => window.tracker && window.tracker.getAcquisitionId);
  const aid = await t.aid();
  const rows = await h.waitFor(aid, (r) => r.length >= 2, 'the queued event');
  assert.deepEqual(rows.map((r) => r.name), ['page_view', 'queued_before_load']);
  assert.deepEqual(rows[1].properties, { n: 1 });
  quiet(t);
  await t.context.close();
});

test('data-debug reports problems on the console', async () => {
  const t = await h.newPage();
  await t.page.goto(h.url('/page.html?debug=1'));
  await t.ready();
  await t.page.evaluate(() => window.tracker.track('bad name!'));
  assert.ok(t.logs.some((l) => l.includes('[revtrack]') && l.includes('bad name!')), t.logs.join('\n'));
  await t.context.close();
});

for (const [minutes, restarts] of [[31, true], [29, false]]) {
  test(`session ${restarts ? 'restarts' : 'continues'} after ${minutes} minutes without an event`, async () => {
    const t = await h.newPage({ clock: Date.now() - HOUR }); // past, so every event is in the past
    await t.page.goto(h.url('/page.html'));
    await t.ready();
    const aid = await t.aid();
    const [first] = await h.waitFor(aid);
    assert.equal(first.returning, false);
    await t.page.clock.fastForward(minutes * 60e3);
    await t.page.evaluate(() => window.tracker.track('after_idle'));
    await t.page.clock.fastForward(2000); // the batch timer
    const rows = await h.waitFor(aid, (r) => r.some((x) => x.name === 'after_idle'), 'after_idle');
    const later = rows.find((r) => r.name === 'after_idle');
    if (restarts) {
      assert.notEqual(later.session_id, first.session_id, 'new session');
      assert.equal(later.returning, true, 'an ID from a previous session makes a returning visitor');
    } else {
      assert.equal(later.session_id, first.session_id, 'same session');
      assert.equal(later.returning, false);
    }
    assert.equal(later.acquisition_id, aid);
    quiet(t);
    await t.context.close();
  });
}

for (const pos of [false, true]) {
  test(`embedded app${pos ? ' (POS user)' : ''}: one platform_context after the first page_view, no identity token sent`, async () => {
    const t = await h.newPage();
    const query = 'embedded=1&hmac=HMACSECRET&host=YWRtaW4&id_token=IDTOKENSECRET&locale=en&session=SESSIONSECRET' +
      '&shop=demo-shop.myshopify.com&timestamp=1700000000' + (pos ? '&pos=1' : '');
    await t.page.goto(h.url(`/embedded.html?${query}`));
    await t.ready();
    const aid = await t.aid();
    await h.waitFor(aid, (r) => r.some((x) => x.name === 'platform_context'), 'platform_context');
    await t.page.click('#nav'); // SPA navigation: another page_view, no second platform_context
    await h.waitFor(aid, (r) => pageViews(r).length >= 2, 'the second page view');
    await h.settle();
    const rows = await h.read(aid);
    const ctx = rows.filter((r) => r.name === 'platform_context');
    assert.equal(ctx.length, 1, 'exactly one platform_context');
    const firstPv = pageViews(rows)[0];
    assert.ok(ctx[0].occurred_at >= firstPv.occurred_at, 'platform_context follows the first page_view');
    assert.equal(ctx[0].platform_shop, 'demo-shop.myshopify.com');
    assert.equal(ctx[0].platform_identity_source, 'embedded_bridge');
    assert.equal(ctx[0].platform_user_id, pos ? '4242' : '', 'a user ID only where the bridge has one');
    assert.equal(firstPv.url, h.url('/embedded.html?embedded=1&locale=en' + (pos ? '&pos=1' : '')));

    assert.equal(await t.page.evaluate(() => window.__bridge.idTokenCalls), 0, 'idToken() is never called');
    assert.equal(await t.page.evaluate(() => window.__bridge.fetchCalls), 0, 'not sent through the bridge-wrapped fetch');
    for (const c of t.collects) {
      assert.ok(!/IDTOKENSECRET|SECRET/.test(JSON.stringify(c)), 'token or auth value in a collect request');
      assert.equal(c.headers.authorization, undefined);
    }
    assert.ok(!/SECRET/.test(JSON.stringify(rows)), 'token or auth value stored');
    quiet(t);
    await t.context.close();
  });
}

test('a not-allowed origin stores nothing and the script does not retry', async () => {
  const t = await h.newPage({ clock: Date.now() - HOUR });
  const answered = t.page.waitForResponse((r) => r.url().startsWith(h.collectUrl) && r.request().method() === 'POST');
  await t.page.goto(h.url('/page.html', { bad: true }));
  await t.ready();
  const aid = await t.aid();
  assert.equal((await answered).status(), 403);
  await sleep(200);
  // Ten minutes later, more events and a page hide: still the one request.
  await t.page.clock.fastForward(10 * 60e3);
  await t.page.evaluate(() => window.tracker.track('after_refusal'));
  await t.page.clock.fastForward(10 * 60e3);
  await t.page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
  await h.settle();
  assert.equal(t.collects.length, 1, `collect requests: ${t.collects.length}`);
  assert.deepEqual(await h.read(aid), []);
  quiet(t);
  await t.context.close();
});

test('an event tracked right before leaving the page still arrives (beacon)', async () => {
  const t = await h.newPage();
  await t.page.goto(h.url('/page.html'));
  await t.ready();
  const aid = await t.aid();
  await t.page.evaluate(() => window.tracker.track('left_in_a_hurry', { step: 3 }));
  await t.page.goto('about:blank'); // another origin: no later page load could resend it
  const rows = await h.waitFor(aid, (r) => r.some((x) => x.name === 'left_in_a_hurry'), 'left_in_a_hurry');
  assert.deepEqual(rows.find((r) => r.name === 'left_in_a_hurry').properties, { step: 3 });
  // The 1 s batch timer never fired: the page left first, so the beacon carried it.
  await t.context.close();
});

test('a failed request is retried with the same eventIds and stored once', async () => {
  const t = await h.newPage();
  let aborted = 0;
  await t.page.route(h.collectUrl + '*', async (route) => {
    if (route.request().method() === 'POST' && aborted === 0) {
      aborted++;
      return route.abort('connectionreset');
    }
    return route.continue();
  });
  await t.page.goto(h.url('/page.html'));
  await t.ready();
  const aid = await t.aid();
  const rows = await h.waitFor(aid);
  await waitUntil(() => t.collects.length >= 2);
  const batches = t.batches();
  assert.ok(batches.length >= 2, `requests: ${batches.length}`);
  assert.deepEqual(batches[1], batches[0], 'the retry resends the same eventIds');
  await h.settle();
  assert.equal((await h.read(aid)).length, 1);
  assert.equal(rows[0].event_id, batches[0][0]);
  quiet(t);
  await t.context.close();
});

test('a new page sends what an earlier page left in the outbox', async () => {
  const t = await h.newPage();
  let block = true;
  await t.page.route(h.collectUrl + '*', (route) => (block ? route.abort('connectionreset') : route.continue()));
  await t.page.goto(h.url('/page.html'));
  await t.ready();
  const aid = await t.aid();
  await t.page.evaluate(() => window.tracker.track('stuck_in_outbox'));
  await sleep(1500);
  // Leave with the network still failing (the beacon fails too), then come back.
  await t.page.goto('about:blank');
  block = false;
  await t.page.goto(h.url('/page.html?again=1'));
  const rows = await h.waitFor(aid, (r) => r.length >= 3, 'the outbox and the new page view');
  assert.deepEqual(rows.map((r) => r.name).sort(), ['page_view', 'page_view', 'stuck_in_outbox']);
  await t.context.close();
});

// Scripted answers need the dev collector; the real edge's 4xx and 429 paths are covered by the
// origin test above and by the edge's own tests.
test('dev collector: 400 and per-event rejections are final; 429 waits for Retry-After', async (ctx) => {
  if (!h.dev) return ctx.skip('needs TRACKER_DEV_COLLECTOR=1 (scripted answers)');
  const t = await h.newPage({ clock: Date.now() - HOUR });
  h.collector.respondNext(400, {}, { error: 'invalid_body', message: 'scripted' });
  await t.page.goto(h.url('/page.html'));
  await t.ready();
  const aid = await t.aid();
  await t.page.clock.fastForward(2000);
  await waitUntil(() => t.collects.length === 1);
  await t.page.clock.fastForward(10 * 60e3);
  await sleep(300);
  assert.equal(t.collects.length, 1, 'a 400 is not retried');

  // 202 with the event rejected: dropped, not resent.
  h.collector.respondNext(202, {}, { accepted: 0, rejected: [{ index: 0, error: 'invalid_parameter', message: 'scripted' }] });
  await t.page.evaluate(() => window.tracker.track('rejected_one'));
  await t.page.clock.fastForward(2000);
  await waitUntil(() => t.collects.length === 2);
  await t.page.clock.fastForward(10 * 60e3);
  await sleep(300);
  assert.equal(t.collects.length, 2, 'a rejected event is not resent');

  // 429 Retry-After: 60 → nothing for 60 s, then the same eventIds again.
  h.collector.respondNext(429, { 'Retry-After': '60' }, { error: 'rate_limited', message: 'scripted' });
  await t.page.evaluate(() => window.tracker.track('after_429'));
  await t.page.clock.fastForward(2000);
  await waitUntil(() => t.collects.length === 3);
  await sleep(200);
  await t.page.clock.fastForward(30e3);
  await sleep(300);
  assert.equal(t.collects.length, 3, 'no retry before Retry-After');
  await t.page.clock.fastForward(31e3);
  await waitUntil(() => t.collects.length === 4);
  const b = t.batches();
  assert.deepEqual(b[3], b[2]);
  const rows = await h.waitFor(aid, (r) => r.some((x) => x.name === 'after_429'), 'after_429');
  assert.deepEqual(rows.map((r) => r.name), ['after_429'], 'only the retried event is stored');
  quiet(t);
  await t.context.close();
});

test('dev collector: 503 once, then 202, stores one copy', async (ctx) => {
  if (!h.dev) return ctx.skip('needs TRACKER_DEV_COLLECTOR=1 (scripted answers); the abort-once test covers the real edge');
  const t = await h.newPage();
  h.collector.respondNext(503, {}, { error: 'unavailable', message: 'scripted' });
  await t.page.goto(h.url('/page.html'));
  await t.ready();
  const aid = await t.aid();
  await h.waitFor(aid);
  await h.settle();
  const b = t.batches();
  assert.equal(b.length, 2);
  assert.deepEqual(b[1], b[0]);
  const sent = h.collector.requests.filter((r) => r.body.includes(aid)).length;
  assert.equal(sent, 2);
  assert.equal((await h.read(aid)).length, 1);
  quiet(t);
  await t.context.close();
});

async function waitUntil(cond, ms = 10000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}
