// revtrack: the server side of the acquisition handoff, for Node (Remix, or any framework whose
// session has get/set, e.g. Remix's createCookieSessionStorage with a secret: a signed cookie).
//
// 1. Before the platform's install: the install button posts window.tracker.getAcquisitionId() to
//    your server, which keeps it in the signed first-party session (rememberAcquisition), then
//    redirects to the platform with your own random OAuth state (never the acquisition ID).
// 2. Only after the platform's OAuth callback is verified (HMAC, state/nonce) and the code is
//    exchanged: build the verified event with the session's acquisition ID and send it.
//
// Environment of your server (never in a browser bundle or a URL):
//   REVTRACK_URL, REVTRACK_TEAM, REVTRACK_TRACKER_PK and REVTRACK_TRACKER_SK (the private key).
//
// Remix, for example:
//   // app/routes/install.tsx
//   export async function action({ request }) {
//     const session = await getSession(request.headers.get('Cookie'));
//     rememberAcquisition(session, (await request.formData()).get('acquisitionId'));
//     const state = randomUUID();
//     session.set('oauth_state', state);
//     return redirect(platformAuthorizeURL(state), { headers: { 'Set-Cookie': await commitSession(session) } });
//   }
//   // app/routes/auth.callback.tsx
//   export async function loader({ request }) {
//     const session = await getSession(request.headers.get('Cookie'));
//     const shop = await verifyCallbackAndExchangeCode(request, session.get('oauth_state')); // throws when invalid
//     const event = verifiedEvent(session, { name: 'install', shop });
//     await saveInstall(shop, event); // a retry resends this same event: same eventId and occurredAt
//     await sendVerifiedEvent(event);
//     return redirect('/app');
//   }
import { randomUUID } from 'node:crypto';

export const ACQUISITION_KEY = 'revtrack_acquisition_id';
const ID = /^[\x21-\x7e]{1,128}$/;

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

// rememberAcquisition keeps the browser's acquisition ID in the signed session; anything that is not
// an ID (a missing field, a tampered value) is ignored.
export function rememberAcquisition(session, acquisitionId) {
  if (typeof acquisitionId === 'string' && ID.test(acquisitionId)) session.set(ACQUISITION_KEY, acquisitionId);
}

// verifiedEvent is the body of POST /api/tracking/server-events. Call it only after the platform
// authenticated the shop. A new eventId per event: a reinstall is a new install.
export function verifiedEvent(session, { name, shop, eventId = randomUUID(), occurredAt = new Date().toISOString(), amountCents, currency }) {
  return {
    teamSlug: env('REVTRACK_TEAM'),
    publicKey: env('REVTRACK_TRACKER_PK'),
    eventId,
    acquisitionId: session.get(ACQUISITION_KEY) || undefined,
    name,
    customerRef: shop,
    occurredAt,
    amountCents, // paid and refunded only, with currency
    currency,
  };
}

// sendVerifiedEvent posts the event with the private key from the environment; a 503 is retried with
// the same body (the same eventId counts once).
export async function sendVerifiedEvent(event) {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(new URL('/api/tracking/server-events', env('REVTRACK_URL')), {
      method: 'POST',
      headers: { 'Authorization': `Bearer ${env('REVTRACK_TRACKER_SK')}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(event),
    });
    if (res.status === 200 || res.status === 202) return res.json();
    if (res.status === 503 && attempt < 4) {
      await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
      continue;
    }
    throw new Error(`revtrack: ${res.status} ${await res.text()}`);
  }
}
