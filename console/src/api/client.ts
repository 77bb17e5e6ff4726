// The console's one way to the server: an openapi-fetch client typed by the OpenAPI document
// (schema.d.ts, generated; `npm run check:api` fails the build when it is stale), so a call to a path
// or parameter the document does not describe does not compile.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

// What every request carries besides the cookie (the browser sends it): the workspace the person is
// looking at and, on state-changing requests, the session's CSRF token.
export const auth = { workspace: '', csrfToken: '' };

// Called with 401 from any call but the session's own: the session ended (expired, revoked).
let onSignedOut: () => void = () => {};
export function whenSignedOut(f: () => void) { onSignedOut = f; }

const headers: Middleware = {
  onRequest({ request }) {
    if (auth.workspace) request.headers.set('X-Revtrack-Workspace', auth.workspace);
    if (!['GET', 'HEAD', 'OPTIONS'].includes(request.method) && auth.csrfToken) {
      request.headers.set('X-CSRF-Token', auth.csrfToken);
    }
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401 && !new URL(request.url).pathname.startsWith('/api/admin/session')) onSignedOut();
    return response;
  },
};

// Same origin: the binary that serves the console serves the APIs.
// fetch is looked up per call (not captured once) so that tests can stand in for it.
export const api = createClient<paths>({ baseUrl: globalThis.location?.origin ?? '', credentials: 'same-origin',
  fetch: (req: Request) => globalThis.fetch(req) });
api.use(headers);

export type ApiError = { error: string; message: string };

// unwrap returns data or throws the API's {error, message} (or a generic one for a network failure).
export function unwrap<T>(r: { data?: T; error?: unknown; response: Response }): T {
  if (r.response.ok) return r.data as T;
  const e = r.error as Partial<ApiError> | undefined;
  const retryAfter = Number(r.response.headers.get('Retry-After')) || undefined;
  throw Object.assign(new Error(e?.message || `HTTP ${r.response.status}`), { code: e?.error || 'unavailable', status: r.response.status, retryAfter });
}
