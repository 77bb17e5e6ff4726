// Test harness: a headless Chromium, the page-serving origins and the read-back of what the
// collector stored. Two modes share every test:
//
//   real (default)            tracker.js and /v1/collect come from the revtrack edge; read-back is
//                             browser_events in ClickHouse over HTTP. Env (all required):
//                               TRACKER_BASE_URL          where /v1/tracker.js and /v1/collect are served
//                               TRACKER_PUBLIC_KEY        tracker_pk_… of an enabled source that allows
//                                                         exactly http://127.0.0.1:$TRACKER_PAGE_PORT
//                               TRACKER_EVENTS_QUERY_URL  ClickHouse HTTP endpoint with the database,
//                                                         e.g. http://127.0.0.1:28123/?database=<db>
//                               TRACKER_PAGE_PORT         port of the allowed page origin (served here)
//                               TRACKER_BAD_PAGE_PORT     port of a second, not allowed origin
//                             Optional: TRACKER_WAIT_MS (read-back patience, default 30000) and
//                             TRACKER_SETTLE_MS (wait before "nothing more arrived", default 5000).
//   TRACKER_DEV_COLLECTOR=1   devcollector.mjs stands in for the edge and read-back is its memory.
//                             Ports default to free ones.
import http from 'node:http';
import { chromium } from 'playwright-core';
import { startDevCollector } from './devcollector.mjs';

export const dev = process.env.TRACKER_DEV_COLLECTOR === '1';

// Flags from ENVIRONMENT.md ("Browser tests").
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (set TRACKER_DEV_COLLECTOR=1 to run against the dev collector)`);
  return v;
}

// setup starts everything a test file needs; call close() at the end.
export async function setup() {
  const pages = await listen(dev ? Number(process.env.TRACKER_PAGE_PORT || 0) : Number(need('TRACKER_PAGE_PORT')));
  const badPages = await listen(dev ? Number(process.env.TRACKER_BAD_PAGE_PORT || 0) : Number(need('TRACKER_BAD_PAGE_PORT')));
  const pageOrigin = `http://127.0.0.1:${pages.address().port}`;
  const badPageOrigin = `http://127.0.0.1:${badPages.address().port}`;

  let collector = null;
  let baseUrl, publicKey, readRows;
  if (dev) {
    publicKey = 'tracker_pk_devcollector';
    collector = await startDevCollector({ publicKey, allowedOrigins: [pageOrigin] });
    baseUrl = collector.url;
    readRows = async (aid) => collector.events().filter((e) => e.acquisitionId === aid).map(fromEvent);
  } else {
    baseUrl = need('TRACKER_BASE_URL').replace(/\/+$/, '');
    publicKey = need('TRACKER_PUBLIC_KEY');
    const queryUrl = need('TRACKER_EVENTS_QUERY_URL');
    readRows = (aid) => queryClickHouse(queryUrl, aid);
  }
  const site = { baseUrl, publicKey };
  pages.on('request', (req, res) => servePage(site, req, res));
  badPages.on('request', (req, res) => servePage(site, req, res));

  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const waitMs = Number(process.env.TRACKER_WAIT_MS || (dev ? 10000 : 30000));
  const settleMs = Number(process.env.TRACKER_SETTLE_MS || (dev ? 1500 : 5000));
  const collectUrl = `${baseUrl}/v1/collect`;

  const h = {
    dev, baseUrl, publicKey, pageOrigin, badPageOrigin, collectUrl, collector,

    /** A new browser context (a new visitor) and page. Records collect requests, console and errors. */
    async newPage({ clock } = {}) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const collects = []; // POSTs to /v1/collect as the browser sent them
      const all = [];      // every request: url, headers, body
      const logs = [];     // console messages
      const errors = [];   // uncaught page errors
      page.on('request', (r) => {
        const entry = { url: r.url(), method: r.method(), headers: r.headers(), body: r.postData() || '', type: r.resourceType() };
        all.push(entry);
        if (entry.method === 'POST' && entry.url.startsWith(collectUrl)) collects.push(entry);
      });
      page.on('console', (m) => logs.push(m.text()));
      page.on('pageerror', (e) => errors.push(String(e)));
      if (clock) await page.clock.install({ time: clock });
      return {
        context, page, collects, all, logs, errors,
        /** eventIds per collect request, in order. */
        batches: () => collects.map((c) => { try { return JSON.parse(c.body).batch.map((e) => e.eventId); } catch { return []; } }),
        aid: () => page.evaluate(() => window.tracker.getAcquisitionId()),
        /** Waits until tracker.js has defined window.tracker. */
        ready: () => page.waitForFunction(() => window.tracker && window.tracker.getAcquisitionId),
      };
    },

    /** URL of a test page on the allowed origin (or on the not-allowed one with bad: true). */
    url: (path, { bad = false } = {}) => (bad ? badPageOrigin : pageOrigin) + path,

    /** The stored rows of one acquisition ID, oldest first (columns of browser_events). */
    async read(aid) {
      const rows = await readRows(aid);
      return rows.sort((a, b) => a.occurred_at - b.occurred_at);
    },

    /** Polls read(aid) until done(rows) holds; returns the rows or throws with the last rows seen. */
    async waitFor(aid, done = (rows) => rows.length > 0, what = 'events') {
      const deadline = Date.now() + waitMs;
      let rows = [];
      for (;;) {
        rows = await h.read(aid);
        if (done(rows)) return rows;
        if (Date.now() > deadline) {
          throw new Error(`timed out waiting for ${what} of ${aid}; have: ${JSON.stringify(rows.map((r) => [r.name, r.url]))}`);
        }
        await sleep(200);
      }
    },

    /** Waits long enough that a late, unexpected event would have arrived. */
    settle: () => sleep(settleMs),

    async close() {
      await browser.close();
      if (collector) await collector.close();
      for (const s of [pages, badPages]) { s.closeAllConnections(); await new Promise((r) => s.close(r)); }
    },
  };
  return h;
}

function listen(port) {
  const server = http.createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

// fromEvent maps an event as sent (collection contract) to a row as browser_events stores it.
function fromEvent(e) {
  const ft = e.firstTouch || {};
  const p = e.platform || {};
  return {
    event_id: e.eventId, source_id: 'dev', acquisition_id: e.acquisitionId, session_id: e.sessionId || '',
    name: e.name, occurred_at: Date.parse(e.occurredAt), url: e.url || '', path: e.path || '',
    title: e.title || '', referrer: e.referrer || '', returning: e.returning === true,
    first_tracker_ref: ft.trackerRef || '', first_utm_source: ft.utmSource || '', first_utm_medium: ft.utmMedium || '',
    first_utm_campaign: ft.utmCampaign || '', first_utm_term: ft.utmTerm || '', first_utm_content: ft.utmContent || '',
    first_gclid: ft.gclid || '', first_gbraid: ft.gbraid || '', first_wbraid: ft.wbraid || '',
    first_landing_url: ft.landingUrl || '', first_referrer: ft.referrer || '',
    platform_shop: p.platformShop || '', platform_user_id: p.platformUserId || '',
    platform_identity_source: p.platformIdentitySource || '', properties: e.properties || {},
  };
}

const COLUMNS = ['event_id', 'source_id', 'acquisition_id', 'session_id', 'name', 'occurred_at', 'occurred_ms', 'url',
  'path', 'title', 'referrer', 'returning', 'first_tracker_ref', 'first_utm_source', 'first_utm_medium',
  'first_utm_campaign', 'first_utm_term', 'first_utm_content', 'first_gclid', 'first_gbraid', 'first_wbraid',
  'first_landing_url', 'first_referrer', 'platform_shop', 'platform_user_id', 'platform_identity_source', 'properties'];

export async function queryClickHouse(queryUrl, aid) {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(aid)) throw new Error(`unexpected acquisition ID ${JSON.stringify(aid)}`);
  // occurred_at is DateTime (seconds) plus occurred_ms; toUnixTimestamp makes it unambiguous.
  const cols = COLUMNS.map((c) => (c === 'occurred_at' ? 'toUnixTimestamp(occurred_at) AS occurred_at' : c)).join(', ');
  const sql = `SELECT ${cols} FROM browser_events FINAL WHERE acquisition_id = '${aid}' FORMAT JSON`;
  const res = await fetch(queryUrl, { method: 'POST', body: sql });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse ${res.status}: ${text}`);
  return JSON.parse(text).data.map((r) => ({
    ...r,
    occurred_at: Number(r.occurred_at) * 1000 + Number(r.occurred_ms || 0),
    returning: Number(r.returning) === 1,
    properties: r.properties ? JSON.parse(r.properties) : {},
  }));
}

// ---- test pages ----

function scriptTag(site, q) {
  const debug = q.has('debug') ? ' data-debug' : '';
  return `<script async src="${site.baseUrl}/v1/tracker.js" data-key="${site.publicKey}"${debug}></script>`;
}

function html(title, head, body) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>${head}</head><body>${body}</body></html>`;
}

// The fake embedded-app bridge has App Bridge's public shape: a global `shopify` with config (apiKey,
// shop, host, locale), user() resolving to an admin user (accountAccess only) or, in POS, a user with
// id, and idToken() resolving to the identity token. Like App Bridge it wraps fetch to add the token
// as Authorization (App Bridge does so for the app's own domain; here for every request, stricter).
const BRIDGE = `<script>
(function () {
  var pos = new URLSearchParams(location.search).has('pos');
  window.__bridge = { idTokenCalls: 0, fetchCalls: 0 };
  window.shopify = {
    config: { apiKey: 'test-api-key', shop: 'demo-shop.myshopify.com', host: 'YWRtaW4uc2hvcGlmeS5jb20vc3RvcmUvZGVtby1zaG9w', locale: 'en' },
    environment: { embedded: true, mobile: false, pos: pos },
    user: function () {
      return Promise.resolve(pos
        ? { id: 4242, firstName: 'Pat', lastName: 'Doe', email: 'pat@example.com', accountAccess: 'Account owner', accountType: 'STAFF' }
        : { accountAccess: 'Account owner' });
    },
    idToken: function () { window.__bridge.idTokenCalls++; return Promise.resolve('IDTOKENSECRET'); },
    toast: { show: function () {} }
  };
  var f = window.fetch;
  window.fetch = function (input, init) {
    window.__bridge.fetchCalls++;
    init = Object.assign({}, init);
    var h = new Headers(init.headers || {});
    h.set('Authorization', 'Bearer IDTOKENSECRET');
    init.headers = h;
    return f.call(window, input, init);
  };
})();
</script>`;

function servePage(site, req, res) {
  const u = new URL(req.url, 'http://x');
  const q = u.searchParams;
  const tag = scriptTag(site, q);
  let page;
  if (u.pathname === '/page.html') {
    page = html('Tracker test page', tag, '<h1>page</h1><a id="next" href="/page.html?next=1">next</a>');
  } else if (u.pathname === '/spa' || u.pathname.startsWith('/spa/')) {
    page = html('SPA', tag, `<h1>spa</h1>
<button id="push-a" onclick="history.pushState({}, '', '/spa/a')">a</button>
<button id="push-b" onclick="history.pushState({}, '', '/spa/b')">b</button>
<button id="replace-same" onclick="history.replaceState({ scroll: 1 }, '', location.href)">replace same</button>
<button id="back" onclick="history.back()">back</button>
<button id="forward" onclick="history.forward()">forward</button>
<a id="hash" href="#details">details</a>`);
  } else if (u.pathname === '/embedded.html') {
    page = html('Embedded app', BRIDGE + tag, '<h1>embedded</h1><button id="nav" onclick="history.pushState({}, \'\', \'/embedded.html?view=2\')">nav</button>');
  } else if (u.pathname === '/stub.html') {
    // Calls made before tracker.js loaded: the documented stub queue.
    page = html('Stub', `<script>
window.tracker = window.tracker || { q: [], track: function () { window.tracker.q.push(['track'].concat([].slice.call(arguments))); } };
window.tracker.track('queued_before_load', { n: 1 });
</script>${tag}`, '<h1>stub</h1>');
  } else {
    res.writeHead(404);
    return res.end();
  }
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(page);
}
