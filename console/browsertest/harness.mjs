// Browser-test harness: Debian's Chromium driven by playwright-core (no browser is ever downloaded),
// against a real `revtrack all` started by the Go test (console/browser_test.go). Env:
//   CONSOLE_URL        the running revtrack (serves the console at / and the APIs)
//   CONSOLE_API_KEY    a workspace key of the demo workspace: the test reads the REST API with it to
//                      compare the numbers on screen with the API's
//   CONSOLE_EMAIL, CONSOLE_PASSWORD  a demo owner; without them (the session API of issue 15 not yet
//                      in this build) the screens are driven with the key instead: every /api request
//                      of the page gets `Authorization: Bearer` and /api/admin/session is answered
//                      by the harness, and the sign-in tests are skipped
//   CONSOLE_SCREENSHOTS  a folder: each screen test writes <screen>.png there (make console-screenshots)
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);

// Flags from ENVIRONMENT.md ("Browser tests"), as ingest/tracker/browsertest uses them.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const env = {
  url: (process.env.CONSOLE_URL || '').replace(/\/+$/, ''),
  apiKey: process.env.CONSOLE_API_KEY || '',
  email: process.env.CONSOLE_EMAIL || '',
  password: process.env.CONSOLE_PASSWORD || '',
  screenshots: process.env.CONSOLE_SCREENSHOTS || '',
};
export const realSessions = Boolean(env.email && env.password);

export async function launch() {
  if (!env.url || !env.apiKey) throw new Error('CONSOLE_URL and CONSOLE_API_KEY are required (console/browser_test.go sets them)');
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

// A new context and page that records page errors and CSP violations.
export async function newPage(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('console', (m) => { if (m.type() === 'error') problems.push('console error: ' + m.text()); });
  if (!realSessions) await keySession(page);
  return { context, page, problems };
}

// Without the session API: the key stands in for the cookie (see the header comment).
async function keySession(page) {
  let signedIn = true;
  const body = { user: { id: 'key', email: 'key@revtrack.local', name: 'API key' },
    workspaces: [{ id: 'demo', slug: 'demo', name: 'Demo Apps Inc.', role: 'owner' }], csrfToken: 'none' };
  await page.route('**/api/**', async (route) => {
    const req = route.request();
    if (new URL(req.url()).pathname === '/api/admin/session') {
      if (req.method() === 'DELETE') { signedIn = false; return route.fulfill({ status: 204 }); }
      if (req.method() === 'POST') signedIn = true;
      return signedIn ? route.fulfill({ json: body }) : route.fulfill({ status: 401, json: { error: 'unauthorized', message: 'not signed in' } });
    }
    return route.continue({ headers: { ...req.headers(), authorization: `Bearer ${env.apiKey}` } });
  });
}

// signIn goes to the console and signs in (with the key stand-in: opens it signed in).
export async function signIn(page, hash = '#/overview') {
  await page.goto(`${env.url}/${hash}`);
  if (realSessions) {
    await page.getByLabel('E-mail').fill(env.email);
    await page.getByLabel('Password').fill(env.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

// api reads the REST API with the key, as a script would.
export async function api(path, params = {}) {
  const q = new URLSearchParams(params).toString();
  const r = await fetch(`${env.url}${path}${q ? '?' + q : ''}`, { headers: { authorization: `Bearer ${env.apiKey}` } });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

// axe runs axe-core from node_modules in the page (evaluated over the DevTools protocol, so the
// page's CSP, which forbids inline script, stays on) and returns the serious and critical violations.
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export async function axe(page) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}

export async function screenshot(page, name) {
  if (env.screenshots) await page.screenshot({ path: `${env.screenshots}/${name}.png`, fullPage: true });
}

// The initial JavaScript: every script and module preload index.html names, gzipped as served.
export function initialJS(distDir) {
  const html = readFileSync(`${distDir}/index.html`, 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
  let raw = 0, gz = 0;
  for (const f of new Set(files)) {
    const b = readFileSync(`${distDir}/${f}`);
    raw += b.length; gz += gzipSync(b, { level: 9 }).length;
  }
  return { files: [...new Set(files)], raw, gz };
}

// The same formatting as the console's src/format.ts (en-US, the currency's minor units).
export function money(cents, currency) {
  const f = new Intl.NumberFormat('en-US', { style: 'currency', currency });
  return f.format(cents / 10 ** f.resolvedOptions().maximumFractionDigits);
}
export const count = (n) => new Intl.NumberFormat('en-US').format(n);
export const percent = (x) => (x === null ? '—' : new Intl.NumberFormat('en-US', { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(x));
