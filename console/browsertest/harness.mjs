// Browser-test harness: Debian's Chromium driven by playwright-core (no browser is ever downloaded),
// against a real `revtrack all` started by the Go test (console/browser_test.go). Env:
//   CONSOLE_URL        the running revtrack (serves the console at / and the APIs)
//   CONSOLE_API_KEY    a workspace key of the demo workspace: the test reads the REST API with it to
//                      compare the numbers on screen with the API's
//   CONSOLE_EMAIL, CONSOLE_PASSWORD  an owner of the demo workspace (the only one the user belongs to)
//   CONSOLE_INVITE_LINK  a one-time invitation link (member) from `revtrack admin user invite`
//   CONSOLE_RESET_LINK, CONSOLE_RESET_EMAIL  a password-reset link and its member's e-mail
//   CONSOLE_SECOND_KEY  a key of the second workspace (slug second), where the owner is a member
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
  inviteLink: process.env.CONSOLE_INVITE_LINK || '',
  resetLink: process.env.CONSOLE_RESET_LINK || '',
  resetEmail: process.env.CONSOLE_RESET_EMAIL || '',
  secondKey: process.env.CONSOLE_SECOND_KEY || '',
};

export async function launch() {
  if (!env.url || !env.apiKey || !env.email || !env.password) throw new Error('CONSOLE_URL, CONSOLE_API_KEY, CONSOLE_EMAIL and CONSOLE_PASSWORD are required (console/browser_test.go sets them)');
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

// A new context and page that records page errors and CSP violations.
export async function newPage(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  // The browser logs every refused request (the 401 of GET /api/admin/session before sign-in, the
  // refusals a test provokes); those are answers, not faults of the page.
  page.on('console', (m) => { if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) problems.push('console error: ' + m.text()); });
  return { context, page, problems };
}

// signIn goes to the console and signs in; the screen in hash shows once the session is there.
export async function signIn(page, hash = '#/overview', password = env.password) {
  await page.goto(`${env.url}/${hash}`);
  await page.getByLabel('E-mail').fill(env.email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // Signed in, or the refusal the page shows (a failing test then says why, at once).
  const out = page.getByRole('button', { name: 'Sign out' });
  await out.or(page.getByRole('alert')).first().waitFor();
  if (!(await out.isVisible())) throw new Error(`sign-in refused: ${await page.getByRole('alert').textContent()}`);
}

// api reads the REST API with the key, as a script would.
export async function api(path, params = {}, key = env.apiKey) {
  const q = new URLSearchParams(params).toString();
  const r = await fetch(`${env.url}${path}${q ? '?' + q : ''}`, { headers: { authorization: `Bearer ${key}` } });
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
