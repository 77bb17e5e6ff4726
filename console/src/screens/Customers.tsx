// Customers: one page at a time (the API's cursor), the app and excluded filters the API takes,
// paying and search applied to the page shown; a shop domain typed in search opens its detail.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { FilterBar } from '../components/FilterBar';
import { ErrorBox, Loading } from '../components/Status';
import { filterParams, query, rememberApps, type Filters } from '../filters';
import { formatMoney } from '../format';
import { href, navigate, type Route } from '../router';
import { useLoad } from '../useLoad';
import { workspace } from '../session';

type Scope = 'included' | 'excluded' | 'all';

export function Customers({ route, filters }: { route: Route; filters: Filters }) {
  const scope = (route.params.get('scope') || 'included') as Scope;
  const [cursors, setCursors] = useState<string[]>([]); // cursors of the pages before this one
  const [cursor, setCursor] = useState<string | undefined>();
  const [search, setSearch] = useState('');
  const [paying, setPaying] = useState<'any' | 'yes' | 'no'>('any');
  const r = useLoad(workspace.value + JSON.stringify(filters) + scope + cursor, async () => unwrap(await api.GET('/api/v1/customers', {
    params: { query: { ...query(filters), customerScope: scope, limit: 50, cursor } } })));
  const q = search.trim().toLowerCase();
  const rows = (r.data?.customers || []).filter((c) =>
    (paying === 'any' || c.paying === (paying === 'yes')) && (!q || c.domain.toLowerCase().includes(q) || c.name.toLowerCase().includes(q)));
  const open = (e: Event) => { e.preventDefault(); if (q.includes('.')) navigate('/customers/' + encodeURIComponent(q), filterParams(filters)); };

  return (
    <main id="main" aria-labelledby="title">
      <h1 id="title">Customers</h1>
      <FilterBar path="/customers" filters={filters} apps={rememberApps(undefined)} extra={{ scope }} />
      <form class="filters" onSubmit={open} role="search">
        <label>Search name or shop domain <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} /></label>
        <label>Paying <select value={paying} onChange={(e) => setPaying(e.currentTarget.value as typeof paying)}>
          <option value="any">Any</option><option value="yes">Paying</option><option value="no">Not paying</option></select></label>
        <label>Excluded <select value={scope} onChange={(e) => { setCursor(undefined); setCursors([]); navigate('/customers', { ...filterParams(filters), scope: e.currentTarget.value }); }}>
          <option value="included">Without excluded</option><option value="excluded">Excluded only</option><option value="all">All</option></select></label>
      </form>
      {r.error && <ErrorBox error={r.error} />}
      {!r.data && r.loading && <Loading what="customers" />}
      {r.data && <table data-testid="customers">
        <thead><tr><th scope="col">Customer</th><th scope="col" class="text">Shop</th><th scope="col" class="text">App</th><th scope="col" class="text">Status</th><th scope="col" class="text">Paying</th><th scope="col">MRR</th></tr></thead>
        <tbody>{rows.map((c) => (
          <tr key={c.id}><th scope="row"><a href={href('/customers/' + encodeURIComponent(c.id), { ...filterParams(filters), app: c.appId })}>{c.name || c.domain}</a></th>
            <td class="text">{c.domain}</td><td class="text">{c.appId}</td><td class="text">{c.status}{c.reportExcluded ? ' (excluded)' : ''}</td><td class="text">{c.paying ? 'yes' : 'no'}</td>
            <td>{c.amrCurrency ? formatMoney(c.amrCents, c.amrCurrency) : '—'}</td></tr>
        ))}</tbody>
      </table>}
      <nav aria-label="Pages" class="pager">
        <button type="button" disabled={cursors.length === 0} onClick={() => { const prev = cursors.slice(0, -1); setCursor(cursors[cursors.length - 1] || undefined); setCursors(prev); }}>Previous page</button>
        <button type="button" disabled={!r.data?.nextCursor} onClick={() => { setCursors([...cursors, cursor || '']); setCursor(r.data!.nextCursor!); }}>Next page</button>
      </nav>
    </main>
  );
}
