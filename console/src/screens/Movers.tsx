// The customers behind one movement bar: type, the interval that contains `period`, one currency.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { ErrorBox, Loading } from '../components/Status';
import { filterParams, query, type Filters } from '../filters';
import { formatDate, formatMoney } from '../format';
import { href, type Route } from '../router';
import { useLoad } from '../useLoad';
import { workspace } from '../session';

type MoveType = 'new' | 'expansion' | 'contraction' | 'churn' | 'reactivation';

export function Movers({ route, filters }: { route: Route; filters: Filters }) {
  const p = route.params;
  const type = (p.get('type') || 'new') as MoveType;
  const period = p.get('period') || filters.to;
  const currency = p.get('currency') || undefined;
  const interval = (p.get('interval') || 'month') as 'day' | 'week' | 'month';
  const [cursor, setCursor] = useState<string | undefined>();
  const r = useLoad(workspace.value + route.params.toString() + cursor, async () => unwrap(await api.GET('/api/v1/mrr-movements/customers', {
    params: { query: { ...query(filters), interval, type, period, currency, cursor, limit: 50 } } })));
  const d = r.data;
  return (
    <main id="main" aria-labelledby="title">
      <p><a href={href('/revenue', { ...filterParams(filters), interval })}>← Revenue</a></p>
      <h1 id="title">{type[0].toUpperCase() + type.slice(1)} MRR{currency ? ` in ${currency}` : ''}</h1>
      {d && <p>{formatDate(d.periodFrom)} – {formatDate(d.date)}</p>}
      {r.error && <ErrorBox error={r.error} />}
      {!d && r.loading && <Loading what="customers" />}
      {d && <table data-testid="movers">
        <thead><tr><th scope="col">Customer</th><th scope="col" class="text">App</th><th scope="col">Start MRR</th><th scope="col">End MRR</th><th scope="col">Movement</th></tr></thead>
        <tbody>{d.customers.map((c) => (
          <tr key={c.id + c.appId}><th scope="row"><a href={href('/customers/' + encodeURIComponent(c.id), { ...filterParams(filters), app: c.appId })}>{c.name || c.domain}</a></th>
            <td class="text">{c.appId}</td><td>{formatMoney(c.startMrrCents, c.currency)}</td><td>{formatMoney(c.endMrrCents, c.currency)}</td>
            <td>{formatMoney(c.movementCents, c.currency)}</td></tr>
        ))}</tbody>
      </table>}
      {d?.nextCursor && <button type="button" onClick={() => setCursor(d.nextCursor!)}>Next page</button>}
    </main>
  );
}
