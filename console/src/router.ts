// Hash routing (#/overview, #/customers/cus_1?…): the server needs no route per screen, and the
// one-time links of the contract carry their token in the fragment, never in a server log.
import { useEffect, useState } from 'preact/hooks';

export type Route = { path: string; params: URLSearchParams };

export function parseHash(hash: string): Route {
  const h = hash.replace(/^#/, '') || '/overview';
  const [path, query = ''] = h.split('?', 2);
  return { path: path || '/overview', params: new URLSearchParams(query) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

export function href(path: string, params?: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v) q.set(k, v);
  const s = q.toString();
  return '#' + path + (s ? '?' + s : '');
}

export function navigate(path: string, params?: Record<string, string | undefined>) { location.hash = href(path, params); }
