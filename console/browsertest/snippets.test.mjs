// The Sources screen's server-side snippets (src/snippets/), run against the real stack: a source
// is created through the admin API, each snippet keeps a browser's acquisition ID in a session and
// sends the verified event with the keys from its environment, and the event must reach the
// tracking API (GET /api/v1/tracking/events) with the Server badge and that acquisition ID. Node is
// always here; Ruby and PHP run when the machine has them, and are skipped otherwise (the static
// check console/snippets_test.go still compares their requests with the Node one's).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { api, env } from './harness.mjs';

const TEAM = 'demo'; // the demo workspace's slug (seed-demo)
const file = (name) => fileURLToPath(new URL(`../src/snippets/${name}`, import.meta.url));
let source, privateKey;

before(async () => {
  const summary = await api('/api/v1/summary');
  const r = await fetch(`${env.url}/api/admin/sources`, { method: 'POST', headers: { authorization: `Bearer ${env.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ appId: summary.coverage.apps[0].appId, name: `snippet test ${Date.now()}`, allowedOrigins: ['https://snippets.example.com'] }) });
  assert.equal(r.status, 201, await r.clone().text());
  ({ source, privateKey } = await r.json());
});

// The server's environment, as the Sources screen gives it.
const serverEnv = () => ({ REVTRACK_URL: env.url, REVTRACK_TEAM: TEAM, REVTRACK_TRACKER_PK: source.publicKey, REVTRACK_TRACKER_SK: privateKey });

// arrived waits until the tracking API lists the event, and returns it.
async function arrived(acquisitionId, eventId) {
  for (let i = 0; i < 60; i++) {
    const { events } = await api('/api/v1/tracking/events', { sourceId: source.id, acquisitionId });
    const e = events.find((x) => x.eventId === eventId);
    if (e) return e;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`event ${eventId} did not reach GET /api/v1/tracking/events within 60 s`);
}

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

test('Node/Remix snippet: the acquisition ID goes into the session, the verified event reaches the tracking API', async () => {
  Object.assign(process.env, serverEnv());
  const { rememberAcquisition, verifiedEvent, sendVerifiedEvent } = await import(file('node-remix.server.mjs'));
  const store = new Map();
  const session = { get: (k) => store.get(k), set: (k, v) => store.set(k, v) }; // Remix's session API
  const acq = randomUUID();
  rememberAcquisition(session, 'not an id'); // tampered or missing values are ignored
  assert.equal(store.size, 0);
  rememberAcquisition(session, acq);
  const shop = `snippet-node-${acq.slice(0, 8)}.myshopify.com`;
  const event = verifiedEvent(session, { name: 'install', shop });
  assert.equal(event.acquisitionId, acq);
  const res = await sendVerifiedEvent(event);
  assert.deepEqual(res, { accepted: true, duplicate: false, eventId: event.eventId });
  assert.equal((await sendVerifiedEvent(event)).duplicate, true, 'a retry of the same event counts once');
  const e = await arrived(acq, event.eventId);
  assert.equal(e.evidence, 'Server');
  assert.equal(e.name, 'install');
});

// runs a snippet in its runtime with the server's environment; the script prints the event and the answer as JSON.
function runOther(cmd, args) {
  const out = execFileSync(cmd, args, { env: { ...process.env, ...serverEnv() }, encoding: 'utf8', timeout: 60000 });
  return JSON.parse(out.trim().split('\n').at(-1));
}

test('Ruby on Rails snippet: the same, run by ruby', async (t) => {
  if (!has('ruby')) return t.skip('ruby is not installed on this machine (console/snippets_test.go checks its request statically)');
  const acq = randomUUID();
  const script = `require ${JSON.stringify(file('rails.rb'))}
session = {}
Revtrack.remember_acquisition(session, "not an id")
Revtrack.remember_acquisition(session, ${JSON.stringify(acq)})
event = Revtrack.verified_event(session, name: "install", shop: "snippet-rails-${acq.slice(0, 8)}.myshopify.com")
puts JSON.generate({ "event" => event, "answer" => Revtrack.send_verified_event(event) })`;
  const { event, answer } = runOther('ruby', ['-e', script]);
  assert.equal(event.acquisitionId, acq);
  assert.deepEqual(answer, { accepted: true, duplicate: false, eventId: event.eventId });
  assert.equal((await arrived(acq, event.eventId)).evidence, 'Server');
});

test('PHP/Laravel snippet: the same, run by php', async (t) => {
  if (!has('php')) return t.skip('php is not installed on this machine (console/snippets_test.go checks its request statically)');
  const acq = randomUUID();
  const script = `require ${JSON.stringify(file('laravel.php'))};
$session = new class { private array $d = []; public function put($k, $v) { $this->d[$k] = $v; } public function get($k) { return $this->d[$k] ?? null; } };
App\\Support\\Revtrack::rememberAcquisition($session, 'not an id');
App\\Support\\Revtrack::rememberAcquisition($session, ${JSON.stringify(acq)});
$event = App\\Support\\Revtrack::verifiedEvent($session, 'install', 'snippet-php-${acq.slice(0, 8)}.myshopify.com');
echo json_encode(['event' => $event, 'answer' => App\\Support\\Revtrack::sendVerifiedEvent($event)]), "\\n";`;
  const { event, answer } = runOther('php', ['-r', script]);
  assert.equal(event.acquisitionId, acq);
  assert.deepEqual(answer, { accepted: true, duplicate: false, eventId: event.eventId });
  assert.equal((await arrived(acq, event.eventId)).evidence, 'Server');
});

