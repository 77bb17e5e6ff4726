/*! revtrack tracker.js. Usage and the reasons behind each rule: README.md */
(function (w, d) {
  // No 'use strict': nothing here depends on it, and the served script is counted in bytes.

  // Parameter names (lower-cased) stripped from captured URLs: ingest.SecretParamPattern (tested).
  const STRIP = /^(hmac|sig|timestamp|session|session_?id|session_state|host|shop|code|state|nonce|(oauth|code)_verifier|saml(request|response)|key|auth|authorization|pass|pwd|otp|jwt|ticket|sid|phpsessid|jsessionid)$|token|secret|passw(or)?d|signature|credential|api[-_]?key/;
  const PARAMS = ['tracker_ref', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'gclid', 'gbraid', 'wbraid'];
  // First touch is kept from the first page view; only these fill in later while empty.
  const LATE = ['trackerRef', 'gclid', 'gbraid', 'wbraid'];
  const NAME = /^[A-Za-z0-9_.:-]{1,64}$/;
  const SESSION_MS = 18e5;  // 30 min without an event ends a session
  const FLUSH_MS = 1000;    // batch delay,
  const FLUSH_AT = 10;      // or batch size
  const MAX_BATCH = 50;     // per request (contract)
  const MAX_BODY = 60000;   // bytes; beacons allow 64 KB
  const MAX_EVENT = 32000;
  const MAX_QUEUE = 500;    // outbox bound, oldest dropped
  const TYPE = 'text/plain;charset=UTF-8'; // no CORS preflight

  let debug = false;
  try { init(); } catch (e) { warn(e); } // never throw into the host page

  function init() {
    const tag = d.currentScript || d.querySelector('script[data-key][src*="/v1/tracker.js"]');
    if (!tag || (w.tracker && w.tracker.__rt)) return;
    debug = tag.hasAttribute('data-debug');
    const key = tag.getAttribute('data-key') || '';
    if (key.indexOf('tracker_pk_') !== 0) return warn('bad data-key');
    const custom = tag.getAttribute('data-api');
    const api = custom ? new URL(custom, location.href).href : new URL('collect', tag.src).href;

    // Memory for this page where localStorage throws (sandboxed frames, privacy modes).
    const ns = 'rt:' + key + ':';
    const mem = {};
    let ls = null;
    try { ls = w.localStorage; ls.setItem(ns, '1'); ls.removeItem(ns); } catch (e) { ls = null; }
    const get = (k) => { try { return JSON.parse(ls ? ls.getItem(ns + k) : mem[k]); } catch (e) { return null; } };
    const set = (k, v) => { v = JSON.stringify(v); if (!ls) mem[k] = v; else try { ls.setItem(ns + k, v); } catch (e) { /* full */ } };

    let aid = get('aid');
    let known = typeof aid === 'string' && aid !== ''; // ID from an earlier session: returning
    if (!known) set('aid', aid = uuid());
    let ft = {};
    const page = { url: '', path: '', ref: clean(d.referrer) };

    function pageview(restored) {
      const url = clean(location.href);
      if (!restored && url === page.url) return; // one page_view per URL change
      if (page.url && !restored) page.ref = page.url; // in-app: the previous page referred
      page.url = url;
      page.path = location.pathname;
      const q = new URLSearchParams(location.search);
      const old = get('ft');
      ft = old || { landingUrl: page.url, referrer: page.ref };
      let changed = !old;
      PARAMS.forEach((p) => {
        const f = p.replace(/_(\w)/g, (_, c) => c.toUpperCase());
        if (q.get(p) && !ft[f] && (!old || LATE.indexOf(f) >= 0)) changed = ft[f] = clip(q.get(p), 256);
      });
      if (changed) set('ft', ft);
      enqueue(event('page_view'));
    }

    function event(name, extra) {
      const now = Date.now(); // tests move this clock
      let s = get('ses');
      if (!s || !(now - s.at <= SESSION_MS)) s = { id: uuid(), ret: known };
      known = true;
      s.at = now;
      set('ses', s);
      return compact(Object.assign({
        eventId: uuid(), name: name, occurredAt: new Date(now).toISOString(), acquisitionId: aid,
        sessionId: s.id, returning: !!s.ret, url: page.url, path: page.path, title: clip(d.title, 512),
        referrer: page.ref, firstTouch: compact(ft)
      }, extra));
    }

    // Outbox in memory and storage; writes re-read storage so tabs keep each other's events. A page
    // adopts what earlier pages left; a copy another tab also sends is deduped by eventId.
    let box = (get('q') || []).filter((e) => e && e.eventId);
    let inflight = null; // eventIds in flight (one request at a time)
    let timer = 0, due = 0, stopped = false;
    let retry = get('retry'); // the next page also waits out a 429, unless the clock moved back
    if (!retry || retry.at - Date.now() > 36e5) retry = { at: 0, n: 0 };

    function persist(add, ids) {
      const q = (get('q') || []).filter((e) => !ids || ids.indexOf(e.eventId) < 0);
      if (add) q.push(add);
      set('q', q.slice(-MAX_QUEUE));
    }

    function enqueue(e) {
      if (stopped) return;
      if (size(e) > MAX_EVENT) return warn('event too large: ' + e.name);
      box = box.concat(e).slice(-MAX_QUEUE);
      persist(e);
      schedule(box.length - (inflight ? inflight.length : 0) >= FLUSH_AT ? 0 : FLUSH_MS);
    }

    function drop(ids) {
      box = box.filter((e) => ids.indexOf(e.eventId) < 0);
      persist(null, ids);
    }

    function schedule(ms) {
      const at = Math.max(Date.now() + ms, retry.at);
      if (stopped || (timer && due <= at)) return;
      clearTimeout(timer);
      due = at;
      timer = setTimeout(() => safe(flush), at - Date.now());
    }

    function take(list) {
      const out = [];
      let bytes = key.length + 20;
      for (const e of list) {
        bytes += size(e) + 1;
        if (out.length === MAX_BATCH || (out.length && bytes > MAX_BODY)) break;
        out.push(e);
      }
      return out;
    }

    const body = (batch) => JSON.stringify({ key: key, batch: batch });

    function flush() {
      timer = 0;
      if (inflight || stopped || !box.length) return;
      if (Date.now() < retry.at) return schedule(0);
      const batch = take(box);
      inflight = batch.map((e) => e.eventId);
      const x = new XMLHttpRequest();
      x.open('POST', api);
      x.setRequestHeader('Content-Type', TYPE);
      x.timeout = 15000;
      x.onload = () => safe(() => done(x.status, x));
      x.onerror = x.ontimeout = () => safe(() => done(0, x));
      x.onabort = () => { inflight = null; }; // the outbox keeps the batch
      x.send(body(batch));
    }

    function done(status, x) {
      const ids = inflight;
      inflight = null;
      if (status && status < 500 && status !== 429) {
        // 2xx (per-event rejections would not change on resend) and 4xx are final; 401 and 403
        // would also refuse every later event, so the page stops sending rather than loop.
        drop(ids);
        if (status > 299 || /"index"/.test(x.responseText)) warn(status + ' ' + x.responseText);
        if (status === 401 || status === 403) { stopped = true; drop(box.map((e) => e.eventId)); }
        if (retry.n) set('retry', retry = { at: 0, n: 0 });
        if (box.length) schedule(0);
        return;
      }
      // Network error, 429, 5xx: resend the same eventIds after a jittered backoff of 2 s to 5 min,
      // at least Retry-After (60 s for a 429 without it). getResponseHeader would log if hidden.
      const n = retry.n + 1;
      const m = /(?:^|\n)retry-after:\s*([^\r\n]+)/i.exec(x.getAllResponseHeaders());
      const ra = m ? (isNaN(m[1]) ? Date.parse(m[1]) - Date.now() : m[1] * 1000) : status === 429 ? 6e4 : 0;
      const ms = Math.max(Math.min(2000 * 2 ** (n - 1), 3e5) * (0.5 + Math.random() / 2), Math.min(ra || 0, 36e5));
      set('retry', retry = { at: Date.now() + ms, n: n });
      warn(status + ', retry in ' + Math.round(ms / 1000) + ' s');
      schedule(0);
    }

    // sendBeacon outlives the page. On pagehide the request in flight goes too: it will be aborted.
    function beacon(all) {
      if (stopped || Date.now() < retry.at || !navigator.sendBeacon) return;
      let list = box.filter((e) => all || !inflight || inflight.indexOf(e.eventId) < 0);
      while (list.length) {
        const b = take(list);
        if (!navigator.sendBeacon(api, new Blob([body(b)], { type: TYPE }))) break;
        drop(b.map((e) => e.eventId));
        list = list.slice(b.length);
      }
    }

    // App Bridge: shop in shopify.config.shop; user() has an id in POS only. No identity token.
    let ctxSent = false;
    function platform() {
      const sh = w.shopify;
      const shop = sh && sh.config && sh.config.shop;
      if (ctxSent || typeof shop !== 'string' || !shop) return;
      ctxSent = true;
      let user = null;
      try { user = sh.user(); } catch (e) { /* no user() */ }
      const send = (u) => safe(() => enqueue(event('platform_context', {
        platform: compact({
          platformShop: clip(shop, 255),
          platformUserId: u && u.id != null ? clip(u.id, 64) : '',
          platformIdentitySource: 'embedded_bridge'
        })
      })));
      Promise.race([user, new Promise((r) => setTimeout(r, 3000))]).then(send, () => send());
    }

    function track(name, props) {
      if (typeof name !== 'string' || !NAME.test(name) || name === 'page_view' || name === 'platform_context') return warn('bad name: ' + name);
      if (props != null && ({}).toString.call(props) !== '[object Object]') return warn('bad properties');
      // A JSON copy: later changes by the caller do not leak in; a cycle throws here.
      enqueue(event(name, props ? { properties: JSON.parse(JSON.stringify(props)) } : null));
    }

    const prev = w.tracker;
    const pub = w.tracker = {
      __rt: 1,
      track: (name, props) => safe(() => track(name, props)),
      getAcquisitionId: () => aid
    };

    pageview(false);
    const q = Array.isArray(prev) ? prev : prev && prev.q;
    if (Array.isArray(q)) q.forEach((c) => safe(() => pub[c[0]].apply(null, c.slice(1))));
    platform();
    if (!ctxSent) w.addEventListener('load', () => safe(platform)); // bridge loaded after us

    // SPA navigation, back/forward and fragments.
    const changed = () => safe(() => pageview(false));
    ['pushState', 'replaceState'].forEach((m) => {
      const orig = history[m];
      history[m] = function () {
        const r = orig.apply(this, arguments);
        changed();
        return r;
      };
    });
    w.addEventListener('popstate', changed);
    w.addEventListener('hashchange', changed);
    // Restored from the back/forward cache: no script runs, no popstate.
    w.addEventListener('pageshow', (e) => { if (e.persisted) safe(() => pageview(true)); });
    d.addEventListener('visibilitychange', () => { if (d.visibilityState === 'hidden') safe(() => beacon(false)); });
    w.addEventListener('pagehide', () => safe(() => beacon(true)));
  }

  // clean drops auth parameters (query and fragment) and credentials from a URL.
  function clean(href) {
    let u;
    if (!href) return '';
    try { u = new URL(href, location.href); } catch (e) { return ''; }
    u.search = strip(u.search.slice(1));
    const h = u.hash.slice(1);
    const i = h.indexOf('?');
    if (h.indexOf('=') >= 0) {
      const rest = strip(i >= 0 ? h.slice(i + 1) : h);
      u.hash = i >= 0 ? h.slice(0, i) + (rest ? '?' + rest : '') : rest;
    }
    u.username = u.password = '';
    return clip(u.href, 2048);
  }

  // strip keeps the other pairs as encoded.
  function strip(qs) {
    return qs.split('&').filter((p) => {
      let k = p.split('=')[0];
      try { k = decodeURIComponent(k.replace(/\+/g, ' ')); } catch (e) { /* raw */ }
      return p && !STRIP.test(k.toLowerCase());
    }).join('&');
  }

  // A version 4 UUID from getRandomValues, which works on http pages too (randomUUID does not).
  function uuid() {
    return '10000000-1000-4000-8000-100000000000'.replace(/[018]/g,
      (n) => (n ^ (w.crypto.getRandomValues(new Uint8Array(1))[0] & (15 >> (n / 4)))).toString(16));
  }

  // compact omits empty fields (contract); false stays.
  function compact(o) {
    const r = {};
    for (const k in o) {
      const v = o[k];
      if (v !== '' && v != null && !(typeof v === 'object' && !Object.keys(v).length)) r[k] = v;
    }
    return r;
  }

  function clip(v, n) { return v == null ? '' : String(v).slice(0, n); }
  function size(v) { return new Blob([JSON.stringify(v)]).size; }
  function safe(f) { try { f(); } catch (e) { warn(e); } }
  function warn(m) { if (debug && w.console) console.warn('[revtrack]', m); }
})(window, document);
