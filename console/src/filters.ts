// The filters every reporting screen shares, kept in the URL's fragment so a view can be linked and
// reloaded: from, to (inclusive UTC dates) and app (one selected app, or all).
import { lastDays, type Range } from './range';
import type { Route } from './router';

export type Filters = Range & { appId?: string };

export function filtersOf(route: Route, today = new Date()): Filters {
  const def = lastDays(30, today);
  return {
    from: route.params.get('from') || def.from,
    to: route.params.get('to') || def.to,
    appId: route.params.get('app') || undefined,
  };
}

// The API's query parameters for the filters.
export function query(f: Filters) {
  return { from: f.from, to: f.to, ...(f.appId ? { appId: f.appId } : {}) };
}

export function filterParams(f: Filters): Record<string, string | undefined> {
  return { from: f.from, to: f.to, app: f.appId };
}

// Apps seen in any reporting answer's coverage (the v1 API has no app list of its own).
const seen = new Set<string>();
export function rememberApps(apps: { appId: string }[] | undefined): string[] {
  for (const a of apps || []) seen.add(a.appId);
  return [...seen].sort();
}
