// Acquisition: customers, funnel and revenue by first-touch channel (GET /api/v1/attribution,
// docs/METRICS.md section 10), per currency and never summed across currencies. Since when each
// app's tracking collects is shown above the table, and the three rows that are not channels are
// explained in visible text: "not tracked yet" must never be read as "organic".
import type { ComponentChildren } from 'preact';
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { FilterBar } from '../components/FilterBar';
import { CoverageBox, ErrorBox, Loading, StaleWarning } from '../components/Status';
import { filterParams, query, rememberApps, type Filters } from '../filters';
import { formatCount, formatMoney, formatPercent, formatTimestamp } from '../format';
import { navigate, type Route } from '../router';
import { useLoad } from '../useLoad';
import { workspace } from '../session';

type Answer = components['schemas']['AttributionResponse'];
type Row = components['schemas']['AttributionRow'];
type GroupBy = Answer['groupBy'];

// The groupBy values the API takes, with what a person calls them and the name of the channel whose
// first touch had no value ("" from the API).
export const groups: [GroupBy, string, string][] = [
  ['utm_campaign', 'UTM campaign', '(no UTM campaign)'], ['utm_source', 'UTM source', '(no UTM source)'],
  ['utm_medium', 'UTM medium', '(no UTM medium)'], ['tracker_ref', 'Tracker ref', '(no tracker ref)'],
  ['click_id_type', 'Click ID type (gclid, gbraid, wbraid)', '(none)'], ['landing_path', 'Landing page path', '(no landing URL)'],
];
const groupLabel = (g: GroupBy) => groups.find(([v]) => v === g)?.[1] ?? g;

// The rows that are not channels, each with its one-line meaning (docs/METRICS.md 10.2).
const special: Record<Exclude<Row['kind'], 'channel'>, [string, string]> = {
  before_tracking: ['Before tracking', 'installed before the app\'s tracking collected its first browser event: their first touch could not be seen (not "organic").'],
  no_browser_history: ['No browser history', 'linked to a browser whose visits are not stored (not arrived yet, or older than the 180-day retention).'],
  unattributed: ['Unattributed', 'installed while tracking was collecting, but no tracked visit led to the install (direct, untracked page, or tracker blocked).'],
};

const rowName = (r: Row, g: GroupBy) =>
  r.kind === 'channel' ? (r.key || (groups.find(([v]) => v === g)?.[2] ?? '(none)')) : special[r.kind][0];

// The count and rate columns, in funnel order; a rate follows the count it divides.
const columns: [string, (r: Row) => string][] = [
  ['Acquisitions', (r) => formatCount(r.acquisitions)],
  ['Installs', (r) => formatCount(r.installs)],
  ['Install rate', (r) => formatPercent(r.installRate)],
  ['Trials started', (r) => formatCount(r.trialsStarted)],
  ['Trial start rate', (r) => formatPercent(r.trialStartRate)],
  ['Trials converted', (r) => formatCount(r.trialsConverted)],
  ['Trial conversion rate', (r) => formatPercent(r.trialConversionRate)],
  ['Customers', (r) => formatCount(r.customers)],
  ['Paying', (r) => formatCount(r.payingCustomers)],
  ['Paying rate', (r) => formatPercent(r.payingRate)],
];

export function Acquisition({ route, filters }: { route: Route; filters: Filters }) {
  const groupBy = (route.params.get('groupBy') || 'utm_campaign') as GroupBy;
  const r = useLoad(workspace.value + JSON.stringify(filters) + groupBy, async () =>
    unwrap(await api.GET('/api/v1/attribution', { params: { query: { ...query(filters), groupBy } } })));
  const d = r.data;
  return (
    <main id="main" aria-labelledby="title">
      <h1 id="title">Acquisition</h1>
      <p>Where customers came from: each customer counts once, in the channel of the first tracked visit that led to their install.</p>
      <FilterBar path="/acquisition" filters={filters} apps={rememberApps(d?.coverage.apps)} extra={{ groupBy }} />
      <label>Channel by <select value={groupBy} onChange={(e) => navigate('/acquisition', { ...filterParams(filters), groupBy: e.currentTarget.value })}>
        {groups.map(([g, label]) => <option key={g} value={g}>{label}</option>)}</select></label>
      {r.error && <ErrorBox error={r.error} />}
      {!d && r.loading && <Loading what="attribution" />}
      {d && <>
        <StaleWarning warning={d.staleDataWarning} />
        <TrackingCoverage answer={d} />
        <CoverageBox coverage={d.coverage} />
        {!d.rows.some((row) => row.kind === 'channel') && <NoChannels answer={d} />}
        <table data-testid="attribution" class="attribution">
          <caption>Customers and funnel by first touch: {groupLabel(groupBy)}</caption>
          <thead><tr><th scope="col">Channel</th>{columns.map(([h]) => <th scope="col" key={h}>{h}</th>)}</tr></thead>
          <tbody>{d.rows.map((row) => (
            <tr key={row.kind + (row.key ?? '')} data-kind={row.kind}><th scope="row">{rowName(row, groupBy)}</th>
              {columns.map(([h, f]) => <td key={h}>{f(row)}</td>)}</tr>
          ))}</tbody>
        </table>
        {d.currencies.map((c) => (
          <table key={c} data-testid={`attribution-${c}`} class="attribution">
            <caption>Revenue in {c} by first touch: {groupLabel(groupBy)} (each currency on its own, never added to another)</caption>
            <thead><tr><th scope="col">Channel</th><th scope="col">Paying in {c}</th><th scope="col">MRR</th><th scope="col">Net revenue in the range</th></tr></thead>
            <tbody>{d.rows.map((row) => {
              const m = row.byCurrency[c];
              return <tr key={row.kind + (row.key ?? '')} data-kind={row.kind}><th scope="row">{rowName(row, groupBy)}</th>
                <td>{m ? formatCount(m.payingCustomers) : '—'}</td><td>{m ? formatMoney(m.mrrCents, c) : '—'}</td><td>{m ? formatMoney(m.netRevenueCents, c) : '—'}</td></tr>;
            })}</tbody>
          </table>
        ))}
        <Legend />
      </>}
    </main>
  );
}

// TrackingCoverage says, per app, since when its tracking sources have browser history: customers
// who installed earlier are in "Before tracking", not in a channel.
function TrackingCoverage({ answer }: { answer: Answer }) {
  const t = answer.coverage.tracking;
  const late = t.some((a) => !a.coversRange);
  return (
    <section class={late ? 'coverage incomplete' : 'coverage'} aria-label="Tracking coverage" data-testid="tracking-coverage">
      <h2>Tracking since</h2>
      {t.length === 0 ? <p>No app is covered by this answer.</p> : (
        <ul>{t.map((a) => (
          <li key={a.appId} data-app={a.appId}>{a.appId}: {a.firstBrowserEventAt
            ? <>collecting since {formatTimestamp(a.firstBrowserEventAt)}{a.coversRange ? ' (the whole range)' : ' (after the range starts: earlier installs count as Before tracking)'}</>
            : 'not collecting (no browser event stored): every customer counts as Before tracking'}</li>
        ))}</ul>
      )}
    </section>
  );
}

// NoChannels is the empty state: what to do when no customer has a tracked first touch.
function NoChannels({ answer }: { answer: Answer }) {
  const tracking = answer.coverage.tracking.some((a) => a.firstBrowserEventAt);
  return (
    <section class="empty" data-testid="attribution-empty" aria-label="No channels">
      <h2>No channel has customers in this view</h2>
      {tracking
        ? <p>Tracking is collecting, but no customer's install followed a tracked visit yet. Check that the app's server sends
          verified <code>install</code> events with the browser's acquisition ID (docs/TRACKING.md, section 4), or widen the range.</p>
        : <Steps>
          <li>Create a tracking source for the app: <code>revtrack admin source create TEAM --app APP_ID --name "Install page" --origins https://…</code> (docs/TRACKING.md, section 1).</li>
          <li>Add <code>tracker.js</code> with the source's public key to the pages people land on (section 2).</li>
          <li>Send <code>install</code>, <code>trial_started</code> and <code>paid</code> from the app's server with the private key (section 4).</li>
        </Steps>}
    </section>
  );
}

const Steps = ({ children }: { children: ComponentChildren }) => (
  <><p>Set up tracking to see where customers come from:</p><ol>{children}</ol></>
);

function Legend() {
  return (
    <section class="legend" aria-label="What the rows and columns mean" data-testid="attribution-legend">
      <h2>What the rows and columns mean</h2>
      <dl>
        <div><dt>(no …)</dt><dd>a channel too: the first tracked visit carried no value for this dimension (a visit without UTM parameters, from a search result or a link).</dd></div>
        {Object.entries(special).map(([kind, [name, text]]) => <div key={kind}><dt>{name}</dt><dd>{text}</dd></div>)}
        <div><dt>Acquisitions, installs, trials</dt><dd>browsers first seen, and verified install and trial events, in the range.</dd></div>
        <div><dt>Rates</dt><dd>install rate = installs ÷ acquisitions, trial start rate = trials started ÷ installs, trial conversion rate = trials converted ÷ trials started (flows of the same range, so they can exceed 100%); paying rate = paying ÷ customers. "—" when there is nothing to divide by.</dd></div>
        <div><dt>Customers, paying, MRR</dt><dd>the row's customers whatever their install date, those paying and their MRR on the range's last day.</dd></div>
        <div><dt>Net revenue</dt><dd>what the row's customers' transactions in the range paid out after fees, refunds and credits.</dd></div>
      </dl>
    </section>
  );
}
