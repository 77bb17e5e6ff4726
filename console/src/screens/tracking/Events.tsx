// The Tracking view's list: recent browser and server events, newest first, filtered by source, event
// name, acquisition ID and shop (all in the fragment, so a view can be linked) and paged the way the
// API pages (its nextCursor; the cursors of the pages before are kept to go back).
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import { FilterBar } from '../../components/FilterBar';
import { ErrorBox, Loading } from '../../components/Status';
import type { Filters } from '../../filters';
import { formatMoney, formatTimestamp } from '../../format';
import { href, navigate, type Route } from '../../router';
import { workspace } from '../../session';
import { useLoad } from '../../useLoad';
import { Badge, browserNames, evidenceMeaning, kindOf, lifecycleNames, NothingYet, sourceName, useSources, type TrackingEvent } from './common';

export const PAGE_SIZE = 50;

// The list's own filters, as the fragment holds them.
export type EventFilters = { source?: string; name?: string; acq?: string; shop?: string };

export function eventFilters(route: Route): EventFilters {
  const get = (k: string) => route.params.get(k)?.trim() || undefined;
  return { source: get('source'), name: get('name'), acq: get('acq'), shop: get('shop') };
}

export function Events({ route, filters }: { route: Route; filters: Filters }) {
  const ef = eventFilters(route);
  const sources = useSources();
  // cursors[i] is the cursor of page i + 1 (page 0 has none); reset whenever the filters change.
  const key = workspace.value + JSON.stringify(filters) + JSON.stringify(ef);
  const [paging, setPaging] = useState<{ key: string; cursors: string[] }>({ key, cursors: [] });
  const cursors = paging.key === key ? paging.cursors : [];
  const cursor = cursors[cursors.length - 1];
  const r = useLoad(key + (cursor ?? ''), async () => unwrap(await api.GET('/api/v1/tracking/events', { params: { query: {
    from: filters.from, to: filters.to, limit: PAGE_SIZE, sourceId: ef.source, name: ef.name, acquisitionId: ef.acq, shop: ef.shop,
    ...(cursor ? { cursor } : {}) } } })));
  const d = r.data;
  const filtered = Object.values(ef).some(Boolean);
  const params = { from: filters.from, to: filters.to, ...ef };
  return (
    <>
      <FilterBar path="/tracking" filters={filters} apps={[]} extra={ef} noApp />
      <EventFilterForm key={JSON.stringify(ef)} ef={ef} sources={sources} params={params} problem={r.error && fieldOf(r.error.message) ? r.error : undefined} />
      <Legend />
      {r.error && !fieldOf(r.error.message) && <ErrorBox error={r.error} />}
      {!d && r.loading && <Loading what="events" />}
      {d && d.events.length === 0 && cursors.length === 0 && (filtered
        ? <section class="empty" data-testid="tracking-no-match" aria-label="No event matches">
          <h2>No event matches these filters</h2>
          <p>Widen the range, or <a href={href('/tracking', { from: filters.from, to: filters.to })}>clear the filters</a>. Names and shops
            match exactly (<code>trial_started</code>, <code>shop.myshopify.com</code>).</p>
        </section>
        : <NothingYet what="tracking event" sources={sources} />)}
      {d && d.events.length > 0 && (
        <table data-testid="tracking-events" class="events">
          <caption>Events, newest first{cursors.length ? ` (page ${cursors.length + 1})` : ''}</caption>
          <thead><tr><th scope="col" class="text">When</th><th scope="col" class="text">Evidence</th><th scope="col" class="text">Event</th>
            <th scope="col" class="text">Acquisition</th><th scope="col" class="text">Shop</th><th scope="col" class="text">Source</th>
            <th scope="col" class="text">Details</th></tr></thead>
          <tbody>{d.events.map((ev) => <Row key={ev.evidence + ev.sourceId + ev.eventId} ev={ev} source={sourceName(sources, ev.sourceId)} range={filters} />)}</tbody>
        </table>
      )}
      {d && (cursors.length > 0 || d.nextCursor) && (
        <nav class="pager" aria-label="Pages of events">
          <button type="button" disabled={cursors.length === 0} onClick={() => setPaging({ key, cursors: cursors.slice(0, -1) })}>Newer events</button>
          <button type="button" disabled={!d.nextCursor} onClick={() => d.nextCursor && setPaging({ key, cursors: [...cursors, d.nextCursor] })}>Older events</button>
        </nav>
      )}
    </>
  );
}

function Row({ ev, source, range }: { ev: TrackingEvent; source: string; range: Filters }) {
  const acq = ev.acquisitionId;
  return (
    <tr data-event={ev.eventId} data-evidence={ev.evidence}>
      <td class="text">{formatTimestamp(ev.occurredAt)}</td>
      <td class="text"><Badge evidence={ev.evidence} /></td>
      <td class="text"><code>{ev.name}</code> <span class="kind">{kindOf(ev)}</span></td>
      <td class="text">{acq
        ? <a href={href('/tracking/acquisitions/' + encodeURIComponent(acq), { from: range.from, to: range.to, source: ev.acquisitionSourceId || (ev.evidence === 'Browser' ? ev.sourceId : undefined) })}
          aria-label={`Journey of acquisition ${acq}`}>{acq}</a>
        : 'not attributed'}</td>
      <td class="text">{ev.shop || '—'}</td>
      <td class="text">{source}</td>
      <td class="text">{details(ev)}</td>
    </tr>
  );
}

export function details(ev: TrackingEvent): string {
  const parts: string[] = [];
  if (ev.path) parts.push(ev.path);
  if (ev.amountCents !== undefined && ev.currency) parts.push(formatMoney(ev.amountCents, ev.currency));
  if (ev.acquisitionResolvedBy === 'shop_link') parts.push('attributed through the shop\'s link');
  return parts.join(' · ') || '—';
}

// fieldOf names the filter an API refusal is about, from its message (the API's 400 and 404 name
// the parameter), so that the message shows next to that field.
export function fieldOf(message: string): keyof EventFilters | undefined {
  if (/tracking source/.test(message)) return 'source';
  if (/^name |\bname must/.test(message)) return 'name';
  if (/\bshop must/.test(message)) return 'shop';
  return undefined;
}

// The list's filters: changing them rewrites the fragment (the range stays).
function EventFilterForm({ ef, sources, params, problem }: { ef: EventFilters; sources: { id: string; name: string; appId: string }[];
  params: Record<string, string | undefined>; problem?: Error & { code?: string } }) {
  const at = problem ? fieldOf(problem.message) : undefined;
  const note = (k: keyof EventFilters) => at === k && problem
    ? <span id="event-filters-problem" data-testid="event-filters-problem" role="alert" class="error">{problem.message}</span> : null;
  const described = (k: keyof EventFilters) => (at === k ? 'event-filters-problem' : undefined);
  const [v, setV] = useState<EventFilters>(ef);
  const set = (k: keyof EventFilters) => (e: Event) => setV({ ...v, [k]: (e.currentTarget as HTMLInputElement).value });
  const submit = (e: Event) => {
    e.preventDefault();
    const t = (x?: string) => x?.trim() || undefined;
    navigate('/tracking', { ...params, source: t(v.source), name: t(v.name), acq: t(v.acq), shop: t(v.shop) });
  };
  return (
    <form class="filters" aria-label="Event filters" onSubmit={submit}>
      <label>Source{' '}<select name="source" value={v.source || ''} onChange={set('source')} aria-describedby={described('source')} aria-invalid={at === 'source'}>
        <option value="">All sources</option>
        {sources.map((s) => <option key={s.id} value={s.id}>{s.name} ({s.appId})</option>)}
        {ef.source && !sources.some((s) => s.id === ef.source) && <option value={ef.source}>{ef.source}</option>}
      </select></label>{note('source')}
      <label>Event name{' '}<input name="name" list="tracking-event-names" value={v.name || ''} onInput={set('name')} placeholder="any" size={16}
        aria-describedby={described('name')} aria-invalid={at === 'name'} /></label>{note('name')}
      <datalist id="tracking-event-names">{[...browserNames, ...lifecycleNames].map((n) => <option key={n} value={n} />)}</datalist>
      <label>Acquisition ID{' '}<input name="acq" value={v.acq || ''} onInput={set('acq')} placeholder="any" size={24} /></label>
      <label>Shop{' '}<input name="shop" value={v.shop || ''} onInput={set('shop')} placeholder="any (shop domain)" size={24}
        aria-describedby={described('shop')} aria-invalid={at === 'shop'} /></label>{note('shop')}
      <button type="submit">Filter</button>
    </form>
  );
}

function Legend() {
  return (
    <section class="legend" aria-label="Evidence badges" data-testid="evidence-legend">
      <dl>
        {(['Browser', 'Server'] as const).map((e) => <div key={e}><dt><Badge evidence={e} /></dt><dd>{evidenceMeaning[e]}.</dd></div>)}
      </dl>
    </section>
  );
}
