// Cohorts as a retention table: each row a cohort month, each cell the share of the cohort's
// customers paying that month (and their subscription MRR), per currency.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { ErrorBox, Loading } from '../components/Status';
import { query, type Filters } from '../filters';
import { formatCount, formatMoney, formatPercent } from '../format';
import { useLoad } from '../useLoad';
import { workspace } from '../session';

export function Cohorts({ filters }: { filters: Filters }) {
  const [by, setBy] = useState<'install' | 'first_paid'>('install');
  const r = useLoad(workspace.value + JSON.stringify(filters) + by, async () =>
    unwrap(await api.GET('/api/v1/cohorts', { params: { query: { ...query(filters), by } } })));
  const d = r.data;
  const width = Math.max(0, ...(d?.cohorts || []).map((c) => c.months.length));
  return (
    <section aria-labelledby="cohorts">
      <h2 id="cohorts">Cohorts</h2>
      <label>Group by <select value={by} onChange={(e) => setBy(e.currentTarget.value as typeof by)}>
        <option value="install">Install month</option><option value="first_paid">First paid month</option></select></label>
      <p>Each row is the customers who {by === 'install' ? 'installed' : 'first paid'} in that month; Month 0 is that month, Month 1 the next, and so on.
        A cell is the share of the row's customers paying in that month, in that currency (how many in brackets); "—" where none.</p>
      {r.error && <ErrorBox error={r.error} />}
      {!d && r.loading && <Loading what="cohorts" />}
      {d && d.currencies.map((c) => (
        <table key={c} class="cohorts" data-testid={`cohorts-${c}`}>
          <caption>Paying customers of each cohort, month by month ({c})</caption>
          <thead><tr><th scope="col">Cohort</th><th scope="col">Customers</th>
            {Array.from({ length: width }, (_, i) => <th scope="col" key={i}>Month {i}</th>)}</tr></thead>
          <tbody>{d.cohorts.map((co) => (
            <tr key={co.cohort}><th scope="row">{co.cohort}</th><td>{formatCount(co.customers)}</td>
              {co.months.map((mo) => {
                const v = mo.byCurrency[c];
                return <td key={mo.month} title={v ? formatMoney(v.mrrCents, c) : undefined}>
                  {v && co.customers > 0 ? `${formatPercent(v.payingCustomers / co.customers)} (${formatCount(v.payingCustomers)})` : '—'}</td>;
              })}</tr>
          ))}</tbody>
        </table>
      ))}
    </section>
  );
}
