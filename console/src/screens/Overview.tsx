// Overview: per currency (never summed) MRR, ARR, paying customers, ARPU, NRR and concentration; the
// MRR chart with the movement bars under it; coverage and the stale-data warning above the numbers.
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { Chart } from '../components/Chart';
import { FilterBar } from '../components/FilterBar';
import { CoverageBox, ErrorBox, Loading, StaleWarning } from '../components/Status';
import { query, rememberApps, type Filters } from '../filters';
import { formatCount, formatMoney, formatPercent } from '../format';
import { defaultInterval } from '../range';
import { useLoad } from '../useLoad';
import { workspace } from '../session';

type Block = components['schemas']['CurrencyBlock'];

export function Overview({ filters }: { filters: Filters }) {
  const key = workspace.value + JSON.stringify(filters);
  const interval = defaultInterval(filters);
  const summary = useLoad(key, async () => unwrap(await api.GET('/api/v1/summary', { params: { query: query(filters) } })));
  const series = useLoad(key, async () => unwrap(await api.GET('/api/v1/metrics/{metric}', {
    params: { path: { metric: 'mrr' }, query: { ...query(filters), interval } } })));
  const moves = useLoad(key, async () => unwrap(await api.GET('/api/v1/mrr-movements', { params: { query: { ...query(filters), interval } } })));
  const apps = rememberApps(summary.data?.coverage.apps);
  const s = summary.data;

  return (
    <main id="main" aria-labelledby="title">
      <h1 id="title">Overview</h1>
      <FilterBar path="/overview" filters={filters} apps={apps} />
      {summary.error && <ErrorBox error={summary.error} />}
      {!s && summary.loading && <Loading what="the summary" />}
      {s && <>
        <StaleWarning warning={s.staleDataWarning} />
        <CoverageBox coverage={s.coverage} />
        {s.currencies.length === 0 && <p data-testid="overview-empty">No paying customers in this range. Widen the range, or check on <a href="#/sync">Sync</a> that the apps' data has been loaded.</p>}
        {s.currencies.map((c) => <CurrencyKpis key={c} currency={c} block={s.byCurrency[c]} />)}
        {s.currencies.length > 0 && <p class="note" data-testid="kpi-legend">Each currency on its own, never added together; all on the range's last day.
          ARPU: subscription MRR ÷ paying customers. Net revenue retention: the subscription MRR, on the last day, of the customers who were paying
          when the range opened ÷ what they paid then (expansion, contraction and churn; no new customers). Customer shares: the largest one, five
          and ten customers' part of the MRR.</p>}
      </>}
      {series.data && 'points' in series.data && s?.currencies.map((c) => {
        const pts = (series.data as components['schemas']['MetricSeriesResponse']).points;
        const mv = moves.data?.periods || [];
        return (
          <section key={c} aria-label={`MRR over time, ${c}`} class="charts">
            <Chart title={`MRR (${c}), by ${interval}`} dates={pts.map((p) => p.date)} format={(v) => formatMoney(v, c)}
              series={[{ label: 'MRR', color: '#1d4ed8', values: pts.map((p) => p.byCurrency[c]?.mrrCents ?? null) }]} />
            {mv.length > 0 && <Chart title={`MRR movements (${c})`} height={140} dates={mv.map((p) => p.date)} format={(v) => formatMoney(v, c)}
              series={[
                { label: 'Gained (new, expansion, reactivation)', color: '#15803d', bars: true,
                  values: mv.map((p) => { const b = p.byCurrency[c]; return b ? b.newCents + b.expansionCents + b.reactivationCents : null; }) },
                { label: 'Lost (contraction, churn)', color: '#b91c1c', bars: true,
                  values: mv.map((p) => { const b = p.byCurrency[c]; return b ? -(b.contractionCents + b.churnCents) : null; }) },
              ]} />}
          </section>
        );
      })}
      {series.error && <ErrorBox error={series.error} />}
      {moves.error && <ErrorBox error={moves.error} />}
    </main>
  );
}

// One currency's numbers. data-testid/data-value let the browser test read the exact figure shown.
function CurrencyKpis({ currency, block }: { currency: string; block: Block }) {
  const m = (v: number) => formatMoney(v, currency);
  const kpis: [string, string, string, number | null][] = [
    ['mrrCents', 'MRR', m(block.mrrCents), block.mrrCents],
    ['arrCents', 'ARR', m(block.arrCents), block.arrCents],
    ['payingCustomers', 'Paying customers', formatCount(block.payingCustomers), block.payingCustomers],
    ['arpuCents', 'ARPU', m(block.arpuCents), block.arpuCents],
    ['netRevenueRetentionRate', 'Net revenue retention', formatPercent(block.netRevenueRetentionRate), block.netRevenueRetentionRate],
    ['largestCustomerShare', 'Largest customer share', formatPercent(block.largestCustomerShare), block.largestCustomerShare],
    ['topFiveCustomerShare', 'Top five customers share', formatPercent(block.topFiveCustomerShare), block.topFiveCustomerShare],
    ['topTenCustomerShare', 'Top ten customers share', formatPercent(block.topTenCustomerShare), block.topTenCustomerShare],
  ];
  return (
    <section class="kpis" aria-label={`Key numbers in ${currency}`}>
      <h2>{currency}</h2>
      <dl>
        {kpis.map(([field, label, shown, raw]) => (
          <div key={field} class="kpi">
            <dt>{label}</dt>
            <dd data-testid={`kpi-${currency}-${field}`} data-value={raw === null ? 'null' : String(raw)}>{shown}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
