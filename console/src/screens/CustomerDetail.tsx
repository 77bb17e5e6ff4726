// One customer: its fields, analytics per currency, coverage, and timeline (newest first).
import { api, unwrap } from '../api/client';
import { ErrorBox, Loading } from '../components/Status';
import { filterParams, query, type Filters } from '../filters';
import { formatCount, formatDate, formatMoney, formatTimestamp } from '../format';
import { href } from '../router';
import { useLoad } from '../useLoad';
import { workspace } from '../session';

export function CustomerDetail({ id, filters }: { id: string; filters: Filters }) {
  const r = useLoad(workspace.value + id + JSON.stringify(filters), async () => unwrap(await api.GET('/api/v1/customers/{customerId}', {
    params: { path: { customerId: id }, query: { ...query(filters), limit: 50 } } })));
  const d = r.data;
  return (
    <main id="main" aria-labelledby="title">
      <p><a href={href('/customers', filterParams(filters))}>← Customers</a></p>
      {r.error && <ErrorBox error={r.error} />}
      {!d && r.loading && <Loading what="the customer" />}
      {d && <>
        <h1 id="title">{d.customer.name || d.customer.domain}</h1>
        <dl class="facts">
          <dt>Shop</dt><dd>{d.customer.domain}</dd>
          <dt>App</dt><dd>{d.customer.appId}</dd>
          <dt>Status</dt><dd>{d.customer.status}{d.customer.reportExcluded ? ' (excluded from reports)' : ''}</dd>
          <dt>Paying</dt><dd>{d.analytics.paying.paying ? 'yes' : 'no'} ({d.analytics.paying.reason})</dd>
          {d.customer.plan && <><dt>Plan</dt><dd>{d.customer.plan}</dd></>}
          {d.customer.health && <><dt>Health</dt><dd>{d.customer.health}</dd></>}
          <dt>First seen</dt><dd>{formatTimestamp(d.customer.firstSeen)}</dd>
          <dt>Last active</dt><dd>{formatTimestamp(d.customer.lastActive)}</dd>
        </dl>
        {d.analytics.currencies.map((c) => {
          const now = d.analytics.current.byCurrency[c];
          const l30 = d.analytics.last30Days.byCurrency[c];
          return (
            <section key={c} aria-label={`Analytics in ${c}`}>
              <h2>{c}</h2>
              <dl class="facts">
                {now && <><dt>MRR on {formatDate(d.analytics.current.asOf)}</dt><dd>{formatMoney(now.mrrCents, c)}</dd></>}
                {d.customer.ltvByCurrencyCents?.[c] !== undefined && <><dt>Lifetime value</dt><dd>{formatMoney(d.customer.ltvByCurrencyCents[c], c)}</dd></>}
                {l30 && <><dt>Last 30 days net revenue</dt><dd>{formatMoney(l30.netCents, c)} ({formatCount(l30.transactionCount)} transactions)</dd></>}
              </dl>
            </section>
          );
        })}
        <p>Coverage: transactions {d.analytics.coverage.transactions.complete ? 'complete' : 'incomplete'}, lifecycle {d.analytics.coverage.lifecycle.complete ? 'complete' : 'incomplete'}.</p>
        <h2>Timeline</h2>
        <table data-testid="timeline">
          <thead><tr><th scope="col" class="text">When</th><th scope="col" class="text">What</th><th scope="col">Amount</th><th scope="col" class="text">Details</th></tr></thead>
          <tbody>{d.timeline.map((e) => (
            <tr key={e.id}><td class="text">{formatTimestamp(e.occurredAt)}</td><td class="text">{e.type.replaceAll('_', ' ').toLowerCase()}</td>
              <td>{e.currency && (e.netCents ?? e.amountCents) !== undefined ? formatMoney((e.netCents ?? e.amountCents)!, e.currency) : ''}</td>
              <td class="text">{[e.chargeName, e.description, e.reason].filter(Boolean).join(' · ')}</td></tr>
          ))}</tbody>
        </table>
      </>}
    </main>
  );
}
