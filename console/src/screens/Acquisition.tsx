// Acquisition: revenue by first-touch channel, with the unattributed row (customers without a
// tracked first touch), per currency.
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { FilterBar } from '../components/FilterBar';
import { ErrorBox, Loading, StaleWarning } from '../components/Status';
import { filterParams, query, rememberApps, type Filters } from '../filters';
import { formatCount, formatMoney, formatPercent } from '../format';
import { navigate, type Route } from '../router';
import { useLoad } from '../useLoad';
import { workspace } from '../session';

type GroupBy = components['schemas']['AttributionResponse']['groupBy'];
const groups: GroupBy[] = ['utm_source', 'utm_medium', 'utm_campaign', 'tracker_ref', 'click_id_type', 'landing_path'];

const rowName = (r: components['schemas']['AttributionRow']) =>
  r.kind === 'channel' ? (r.key || '(none)') : r.kind.replaceAll('_', ' ');

export function Acquisition({ route, filters }: { route: Route; filters: Filters }) {
  const groupBy = (route.params.get('groupBy') || 'utm_campaign') as GroupBy;
  const r = useLoad(workspace.value + JSON.stringify(filters) + groupBy, async () =>
    unwrap(await api.GET('/api/v1/attribution', { params: { query: { ...query(filters), groupBy } } })));
  const d = r.data;
  return (
    <main id="main" aria-labelledby="title">
      <h1 id="title">Acquisition</h1>
      <FilterBar path="/acquisition" filters={filters} apps={rememberApps(d?.coverage.apps)} extra={{ groupBy }} />
      <label>Channel by <select value={groupBy} onChange={(e) => navigate('/acquisition', { ...filterParams(filters), groupBy: e.currentTarget.value })}>
        {groups.map((g) => <option key={g} value={g}>{g.replaceAll('_', ' ')}</option>)}</select></label>
      {r.error && <ErrorBox error={r.error} />}
      {!d && r.loading && <Loading what="attribution" />}
      {d && <>
        <StaleWarning warning={d.staleDataWarning} />
        <table data-testid="attribution">
          <caption>Customers and revenue by first touch ({groupBy.replaceAll('_', ' ')})</caption>
          <thead><tr><th scope="col">Channel</th><th scope="col">Acquisitions</th><th scope="col">Installs</th><th scope="col">Customers</th>
            <th scope="col">Paying</th><th scope="col">Paying rate</th>{d.currencies.map((c) => <th scope="col" key={c}>MRR ({c})</th>)}</tr></thead>
          <tbody>{d.rows.map((row) => (
            <tr key={row.kind + (row.key ?? '')} data-kind={row.kind}><th scope="row">{rowName(row)}</th>
              <td>{formatCount(row.acquisitions)}</td><td>{formatCount(row.installs)}</td><td>{formatCount(row.customers)}</td>
              <td>{formatCount(row.payingCustomers)}</td><td>{formatPercent(row.payingRate)}</td>
              {d.currencies.map((c) => <td key={c}>{row.byCurrency[c] ? formatMoney(row.byCurrency[c].mrrCents, c) : '—'}</td>)}</tr>
          ))}</tbody>
        </table>
      </>}
    </main>
  );
}
