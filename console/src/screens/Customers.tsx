// Customers: the API filters and pages the list (q, paying, appId, customerScope, cursor), so a
// search or filter covers every customer, not only the page shown. The filters live in the URL, so a
// filtered list can be linked and Back returns to it.
import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { FilterBar } from '../components/FilterBar';
import { ErrorBox, Loading } from '../components/Status';
import { filterParams, query, rememberApps, type Filters } from '../filters';
import { formatMoney } from '../format';
import { href, navigate, type Route } from '../router';
import { useLoad } from '../useLoad';
import { workspace } from '../session';

type Scope = 'included' | 'excluded' | 'all';
type Paying = 'any' | 'true' | 'false';

// searchDelay is how long typing pauses before the search is sent: one request per pause, not per key.
const searchDelay = 300;

export function Customers({ route, filters }: { route: Route; filters: Filters }) {
  const scope = (route.params.get('scope') || 'included') as Scope;
  const q = (route.params.get('q') || '').trim();
  const paying = (['true', 'false'].includes(route.params.get('paying') || '') ? route.params.get('paying') : 'any') as Paying;
  const params = (over: Record<string, string | undefined>) =>
    ({ ...filterParams(filters), scope, q: q || undefined, paying: paying === 'any' ? undefined : paying, ...over });

  // The cursors belong to one list: a change of any filter starts again from the first page.
  const listKey = workspace.value + JSON.stringify(filters) + scope + '\x1f' + q + '\x1f' + paying;
  const [paging, setPaging] = useState<{ key: string; cursors: string[]; cursor?: string }>({ key: listKey, cursors: [] });
  const page = paging.key === listKey ? paging : { key: listKey, cursors: [] as string[], cursor: undefined };
  const r = useLoad(listKey + '\x1f' + (page.cursor || ''), async () => unwrap(await api.GET('/api/v1/customers', {
    params: { query: { ...query(filters), customerScope: scope, limit: 50, cursor: page.cursor, q: q || undefined,
      paying: paying === 'any' ? undefined : paying } } })));

  // A paying page may be empty and still have a next one (the server bounds each page's scan):
  // go on at once, in place of the empty page, so that Previous never returns to it.
  const customers = r.data?.customers || [];
  const next = r.data?.nextCursor;
  useEffect(() => {
    if (r.data && customers.length === 0 && next) setPaging({ key: listKey, cursors: page.cursors, cursor: next });
  }, [r.data]);

  const [text, setText] = useState(q);
  useEffect(() => { setText(q); }, [q]);
  const apply = (value: string) => {
    const v = value.trim();
    if (v !== q) navigate('/customers', params({ q: v || undefined }));
  };
  useEffect(() => {
    const t = setTimeout(() => apply(text), searchDelay);
    return () => clearTimeout(t);
  }, [text]);

  const filtered = q !== '' || paying !== 'any' || scope !== 'included' || !!filters.appId;
  return (
    <main id="main" aria-labelledby="title">
      <h1 id="title">Customers</h1>
      <FilterBar path="/customers" filters={filters} apps={rememberApps(undefined)} extra={{ scope, q: q || undefined, paying: paying === 'any' ? undefined : paying }} />
      <form class="filters" onSubmit={(e) => { e.preventDefault(); apply(text); }} role="search" aria-label="Customers">
        <label>Search name or shop domain <input type="search" value={text} maxLength={100} onInput={(e) => setText(e.currentTarget.value)} /></label>
        <label>Paying <select value={paying} onChange={(e) => navigate('/customers', params({ paying: e.currentTarget.value === 'any' ? undefined : e.currentTarget.value }))}>
          <option value="any">Any</option><option value="true">Paying</option><option value="false">Not paying</option></select></label>
        <label>Excluded <select value={scope} onChange={(e) => navigate('/customers', params({ scope: e.currentTarget.value }))}>
          <option value="included">Without excluded</option><option value="excluded">Excluded only</option><option value="all">All</option></select></label>
      </form>
      {r.error && <ErrorBox error={r.error} />}
      {(r.loading || (customers.length === 0 && next)) && !r.error && <Loading what="customers" />}
      {r.data && customers.length === 0 && !next && (
        <p role="status" data-testid="customers-empty">{filtered ? 'No customers match these filters.' : 'No customers yet.'}</p>)}
      {r.data && customers.length > 0 && <table data-testid="customers">
        <thead><tr><th scope="col">Customer</th><th scope="col" class="text">Shop</th><th scope="col" class="text">App</th><th scope="col" class="text">Status</th><th scope="col" class="text">Paying</th><th scope="col">MRR</th></tr></thead>
        <tbody>{customers.map((c) => (
          <tr key={c.id}><th scope="row"><a href={href('/customers/' + encodeURIComponent(c.id), { ...filterParams(filters), app: c.appId })}>{c.name || c.domain}</a></th>
            <td class="text">{c.domain}</td><td class="text">{c.appId}</td><td class="text">{c.status}{c.reportExcluded ? ' (excluded)' : ''}</td><td class="text">{c.paying ? 'yes' : 'no'}</td>
            <td>{c.amrCurrency ? formatMoney(c.amrCents, c.amrCurrency) : '—'}</td></tr>
        ))}</tbody>
      </table>}
      <nav aria-label="Pages" class="pager">
        <button type="button" disabled={page.cursors.length === 0}
          onClick={() => setPaging({ key: listKey, cursors: page.cursors.slice(0, -1), cursor: page.cursors[page.cursors.length - 1] || undefined })}>Previous page</button>
        <button type="button" disabled={!next || customers.length === 0}
          onClick={() => setPaging({ key: listKey, cursors: [...page.cursors, page.cursor || ''], cursor: next! })}>Next page</button>
      </nav>
    </main>
  );
}
