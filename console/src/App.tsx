// The shell: signed out → sign-in; signed in → navigation, workspace switcher, account, sign-out
// and the screen the fragment names.
import { useEffect } from 'preact/hooks';
import { whenSignedOut } from './api/client';
import { filterParams, filtersOf } from './filters';
import { href, useRoute } from './router';
import { loadSession, session, sessionState, signedOut, signOut, switchWorkspace, workspace } from './session';
import { Account } from './screens/Account';
import { Acquisition } from './screens/Acquisition';
import { CustomerDetail } from './screens/CustomerDetail';
import { Customers } from './screens/Customers';
import { Movers } from './screens/Movers';
import { AcceptInvitation, ResetPassword } from './screens/OneTimeLink';
import { Overview } from './screens/Overview';
import { People } from './screens/People';
import { Revenue } from './screens/Revenue';
import { SignIn } from './screens/SignIn';
import { Sync } from './screens/Sync';
import { Ads } from './screens/Ads';
import { Funnel } from './screens/Funnel';
import { Settings } from './screens/Settings';
import { Sources } from './screens/Sources';
import { Tracking } from './screens/Tracking';

const nav = [
  { path: '/overview', label: 'Overview' },
  { path: '/revenue', label: 'Revenue' },
  { path: '/customers', label: 'Customers' },
  { path: '/acquisition', label: 'Acquisition' },
  { path: '/funnel', label: 'Funnel' },
  { path: '/tracking', label: 'Tracking' },
  { path: '/sources', label: 'Sources' },
  { path: '/ads', label: 'Ads' },
  { path: '/sync', label: 'Sync' },
  { path: '/people', label: 'People' },
  { path: '/settings', label: 'Settings' },
];

export function App() {
  const route = useRoute();
  useEffect(() => { whenSignedOut(signedOut); loadSession(); }, []);
  if (sessionState.value === 'unknown') return <p role="status" class="loading">Loading…</p>;
  // The one-time links open their own page, signed in or not.
  if (route.path === '/accept-invitation') return <AcceptInvitation route={route} />;
  if (route.path === '/reset-password') return <ResetPassword route={route} />;
  if (sessionState.value === 'signedOut' || !session.value) return <SignIn />;
  const s = session.value;
  const filters = filtersOf(route);
  const keep = filterParams(filters);
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to content</a>
      <header class="top">
        <span class="brand">revtrack</span>
        <nav aria-label="Screens">
          {nav.map((n) => <a key={n.path} href={href(n.path, keep)} aria-current={route.path.startsWith(n.path) ? 'page' : undefined}>{n.label}</a>)}
        </nav>
        <label class="workspace">Workspace{' '}
          <select value={workspace.value} onChange={(e) => switchWorkspace(e.currentTarget.value)}>
            {s.workspaces.map((w) => <option key={w.slug} value={w.slug}>{w.name} ({w.role})</option>)}
          </select>
        </label>
        <a href="#/account" aria-current={route.path === '/account' ? 'page' : undefined}>{s.user.name || s.user.email}</a>
        <button type="button" onClick={() => signOut()}>Sign out</button>
      </header>
      <Screen path={route.path} route={route} filters={filters} />
    </>
  );
}

function Screen({ path, route, filters }: { path: string; route: ReturnType<typeof useRoute>; filters: ReturnType<typeof filtersOf> }) {
  if (path === '/revenue') return <Revenue route={route} filters={filters} />;
  if (path === '/revenue/customers') return <Movers route={route} filters={filters} />;
  if (path === '/customers') return <Customers route={route} filters={filters} />;
  if (path.startsWith('/customers/')) return <CustomerDetail id={decodeURIComponent(path.slice('/customers/'.length))} filters={filters} />;
  if (path === '/acquisition') return <Acquisition route={route} filters={filters} />;
  if (path === '/account') return <Account />;
  if (path === '/sync') return <Sync />;
  if (path === '/people') return <People />;
  // Issue 16's screens: each owns the sub-paths under its own prefix (#/tracking/journey, …).
  if (path.startsWith('/funnel')) return <Funnel route={route} filters={filters} />;
  if (path.startsWith('/tracking')) return <Tracking route={route} filters={filters} />;
  if (path.startsWith('/sources')) return <Sources route={route} filters={filters} />;
  if (path.startsWith('/ads')) return <Ads route={route} filters={filters} />;
  if (path.startsWith('/settings')) return <Settings route={route} filters={filters} />;
  return <Overview filters={filters} />;
}
