// Revenue: one metric as a series at a chosen interval, the MRR movements per period (each count
// links to the customers behind it) and cohorts as a retention table.
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { Chart } from '../components/Chart';
import { FilterBar } from '../components/FilterBar';
import { ErrorBox, Loading, StaleWarning } from '../components/Status';
import { filterParams, query, rememberApps, type Filters } from '../filters';
import { formatDate, formatMoney, formatPercent } from '../format';
import { href, navigate, type Route } from '../router';
import { useLoad } from '../useLoad';
import { workspace } from '../session';
import { Cohorts } from './Cohorts';

type Metric = 'mrr' | 'arr' | 'net-revenue-retention' | 'customer-concentration';
type Interval = 'day' | 'week' | 'month';
type Point = components['schemas']['MetricSeriesResponse']['points'][number]['byCurrency'][string];

const metrics: { id: Metric; label: string; field: keyof Point; money: boolean }[] = [
  { id: 'mrr', label: 'MRR', field: 'mrrCents', money: true },
  { id: 'arr', label: 'ARR', field: 'arrCents', money: true },
  { id: 'net-revenue-retention', label: 'Net revenue retention', field: 'netRevenueRetentionRate', money: false },
  { id: 'customer-concentration', label: 'Top ten customers share', field: 'topTenCustomerShare', money: false },
];

export const movementTypes = [
  { type: 'new', label: 'New', cents: 'newCents', customers: 'newCustomers' },
  { type: 'expansion', label: 'Expansion', cents: 'expansionCents', customers: 'expansionCustomers' },
  { type: 'reactivation', label: 'Reactivation', cents: 'reactivationCents', customers: 'reactivatedCustomers' },
  { type: 'contraction', label: 'Contraction', cents: 'contractionCents', customers: 'contractionCustomers' },
  { type: 'churn', label: 'Churn', cents: 'churnCents', customers: 'churnedCustomers' },
] as const;

export function Revenue({ route, filters }: { route: Route; filters: Filters }) {
  const metric = (route.params.get('metric') as Metric) || 'mrr';
  const interval = (route.params.get('interval') as Interval) || 'month';
  const key = workspace.value + JSON.stringify(filters) + interval;
  const m = metrics.find((x) => x.id === metric) || metrics[0];
  const series = useLoad(key + metric, async () => unwrap(await api.GET('/api/v1/metrics/{metric}', {
    params: { path: { metric: m.id }, query: { ...query(filters), interval } } })) as components['schemas']['MetricSeriesResponse']);
  const moves = useLoad(key, async () => unwrap(await api.GET('/api/v1/mrr-movements', { params: { query: { ...query(filters), interval } } })));
  const apps = rememberApps(series.data?.coverage.apps);
  const extra = { metric, interval };
  const set = (p: Record<string, string>) => navigate('/revenue', { ...filterParams(filters), ...extra, ...p });

  return (
    <main id="main" aria-labelledby="title">
      <h1 id="title">Revenue</h1>
      <FilterBar path="/revenue" filters={filters} apps={apps} extra={extra} />
      <div class="filters">
        <label>Metric <select value={metric} onChange={(e) => set({ metric: e.currentTarget.value })}>
          {metrics.map((x) => <option key={x.id} value={x.id}>{x.label}</option>)}</select></label>
        <label>Interval <select value={interval} onChange={(e) => set({ interval: e.currentTarget.value })}>
          <option value="day">Day</option><option value="week">Week</option><option value="month">Month</option></select></label>
      </div>
      {series.error && <ErrorBox error={series.error} />}
      {!series.data && series.loading && <Loading what={m.label} />}
      {series.data && <>
        <StaleWarning warning={series.data.staleDataWarning} />
        {series.data.currencies.map((c) => {
          const fmt = (v: number) => (m.money ? formatMoney(v, c) : formatPercent(v));
          const pts = series.data!.points;
          const vals = pts.map((p) => (p.byCurrency[c]?.[m.field] as number | null | undefined) ?? null);
          return (
            <section key={c} aria-label={`${m.label} in ${c}`}>
              <Chart title={`${m.label} (${c}), by ${interval}`} dates={pts.map((p) => p.date)} format={fmt}
                series={[{ label: m.label, color: '#1d4ed8', values: vals }]} />
              <details><summary>{m.label} ({c}) as a table</summary>
                <table><thead><tr><th scope="col">Date</th><th scope="col">{m.label}</th></tr></thead>
                  <tbody>{pts.map((p, i) => <tr key={p.date}><td>{formatDate(p.date)}</td>
                    <td data-testid={`series-${c}-${p.date}`}>{vals[i] === null ? '—' : fmt(vals[i]!)}</td></tr>)}</tbody></table>
              </details>
            </section>
          );
        })}
      </>}
      <h2>MRR movements</h2>
      {moves.error && <ErrorBox error={moves.error} />}
      {moves.data && moves.data.currencies.map((c) => (
        <table key={c} class="movements" data-testid={`movements-${c}`}>
          <caption>Movements in {c} by {interval} (subscription MRR); select an amount for its customers</caption>
          <thead><tr><th scope="col">Period</th>{movementTypes.map((t) => <th scope="col" key={t.type}>{t.label}</th>)}<th scope="col">Net</th></tr></thead>
          <tbody>{moves.data!.periods.map((p) => {
            const b = p.byCurrency[c];
            return (
              <tr key={p.date}><th scope="row">{formatDate(p.periodFrom)} – {formatDate(p.date)}</th>
                {movementTypes.map((t) => <td key={t.type}>{b && b[t.customers] > 0
                  ? <a href={href('/revenue/customers', { ...filterParams(filters), interval, type: t.type, period: p.date, currency: c })}>
                      {formatMoney(b[t.cents], c)} ({b[t.customers]})</a>
                  : b ? formatMoney(b[t.cents], c) : '—'}</td>)}
                <td>{b ? formatMoney(b.netCents, c) : '—'}</td></tr>
            );
          })}</tbody>
        </table>
      ))}
      <Cohorts filters={filters} />
    </main>
  );
}
