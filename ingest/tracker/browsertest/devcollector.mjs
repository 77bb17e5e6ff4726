// A throwaway stand-in for the collect edge, used only with TRACKER_DEV_COLLECTOR=1 while the real
// edge is being written. It serves ../tracker.min.js (the script as the edge serves it) at /v1/tracker.js and answers POST /v1/collect per
// the collection contract (README.md), keeping what it accepted in memory. The real run uses the Go
// edge and reads back from ClickHouse; every test goes through harness.mjs for both.
import http from 'node:http';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../tracker.min.js', import.meta.url));
const NAME = /^[A-Za-z0-9_.:-]{1,64}$/;
const MAX_BODY = 64 * 1024;

// startDevCollector listens on 127.0.0.1 (port 0: any free port). allowedOrigins are exact origins.
export async function startDevCollector({ publicKey, allowedOrigins, port = 0 }) {
  const requests = []; // every POST: {origin, status, body}
  const events = new Map(); // eventId -> event; a repeated eventId is deduplicated (one remains)
  const scripted = []; // canned responses for the next POSTs: {status, headers, body}

  const server = http.createServer((req, res) => {
    const origin = req.headers.origin;
    // CORS on every answer, errors included: a browser that cannot read a 403 sees a network error
    // and would retry it. Like the edge, only an allowed origin is echoed with credentials; anything
    // else is readable without them.
    if (origin) {
      const allowed = allowedOrigins.includes(origin);
      res.setHeader('Access-Control-Allow-Origin', allowed && req.method === 'POST' ? origin : '*');
      if (allowed && req.method === 'POST') res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Access-Control-Expose-Headers', 'Retry-After');
      res.setHeader('Vary', 'Origin');
    }
    const path = new URL(req.url, 'http://x').pathname;
    if (req.method === 'GET' && path === '/v1/tracker.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-store' });
      return res.end(fs.readFileSync(SCRIPT));
    }
    if (req.method === 'OPTIONS' && path === '/v1/collect') {
      res.writeHead(204, { 'Access-Control-Allow-Methods': 'POST', 'Access-Control-Allow-Headers': 'Content-Type', 'Access-Control-Max-Age': '600' });
      return res.end();
    }
    if (req.method !== 'POST' || path !== '/v1/collect') {
      res.writeHead(404);
      return res.end();
    }
    const chunks = [];
    let size = 0;
    req.on('data', (c) => { size += c.length; if (size <= MAX_BODY) chunks.push(c); });
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const answer = (status, body, headers = {}) => {
        requests.push({ origin, status, body: raw });
        res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      const fail = (status, error, message) => answer(status, { error, message });
      if (scripted.length) {
        const s = scripted.shift();
        return answer(s.status, s.body || { error: 'scripted', message: 'scripted answer' }, s.headers);
      }
      if (size > MAX_BODY) return fail(413, 'payload_too_large', 'body over 64 KB');
      if (!allowedOrigins.includes(origin)) return fail(403, 'origin_not_allowed', `origin ${origin} is not allowed`);
      let msg;
      try { msg = JSON.parse(raw); } catch { return fail(400, 'invalid_body', 'not JSON'); }
      if (!msg || typeof msg.key !== 'string' || !Array.isArray(msg.batch) || msg.batch.length < 1 || msg.batch.length > 50) {
        return fail(400, 'invalid_body', 'want {key, batch[1..50]}');
      }
      if (msg.key !== publicKey) return fail(401, 'tracking_source_unavailable', 'unknown, rotated or disabled key');
      const rejected = [];
      let accepted = 0;
      msg.batch.forEach((e, index) => {
        const problem = invalid(e);
        if (problem) return rejected.push({ index, error: 'invalid_parameter', message: problem });
        accepted++;
        if (!events.has(e.eventId)) events.set(e.eventId, e);
      });
      answer(202, { accepted, rejected });
    });
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    /** Stored events (deduplicated), in arrival order. */
    events: () => [...events.values()],
    /** Answers the next POST with status (and optional headers and body) instead of processing it. */
    respondNext: (status, headers, body) => scripted.push({ status, headers, body }),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

function invalid(e) {
  if (!e || typeof e !== 'object') return 'not an object';
  if (typeof e.eventId !== 'string' || !e.eventId) return 'eventId missing';
  if (typeof e.acquisitionId !== 'string' || !e.acquisitionId) return 'acquisitionId missing';
  if (typeof e.name !== 'string' || !NAME.test(e.name)) return 'bad name';
  if (Number.isNaN(Date.parse(e.occurredAt))) return 'bad occurredAt';
  if (e.properties !== undefined && (typeof e.properties !== 'object' || Array.isArray(e.properties))) return 'properties not an object';
  if (e.name === 'platform_context' && !(e.platform && e.platform.platformShop)) return 'platform missing';
  return '';
}
