// One acquisition's journey (GET /api/v1/tracking/acquisitions/{id}): its first touch, sessions, the
// shops it joined and every event, oldest first, each with its evidence badge.
import { Fragment } from 'preact';
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { ErrorBox, Loading } from '../../components/Status';
import { formatCount, formatTimestamp } from '../../format';
import { href } from '../../router';
import { workspace } from '../../session';
import { useLoad } from '../../useLoad';
import { details } from './Events';
import { Badge, kindOf, sourceName, useSources } from './common';

type Journey = components['schemas']['TrackingJourney'];
type FirstTouch = components['schemas']['AcquisitionFirstTouch'];

export function JourneyView({ id, sourceId, back }: { id: string; sourceId?: string; back: Record<string, string | undefined> }) {
  const sources = useSources();
  const r = useLoad(workspace.value + id + (sourceId ?? ''), async () => unwrap(await api.GET('/api/v1/tracking/acquisitions/{id}', {
    params: { path: { id }, query: sourceId ? { sourceId } : {} } })));
  const j = r.data?.journey;
  return (
    <main id="main" aria-labelledby="title" tabIndex={-1}>
      <p><a href={href('/tracking', back)}>← Recent events of this acquisition</a></p>
      <h1 id="title">Journey of acquisition <code>{id}</code></h1>
      <p>One browser, from its first tracked visit to the shop it joined. <strong>Browser</strong> events show the visit;
        only <strong>Server</strong> events, verified by your server, show installs, trials and payments.</p>
      {r.error && <ErrorBox error={r.error} />}
      {r.error?.code === 'not_found' && <p class="note">No event of this workspace's apps carries this ID: check it is the value of
        <code>window.tracker.getAcquisitionId()</code> on the page and that your server sends it with its events; browser history is kept 180 days.</p>}
      {!j && r.loading && <Loading what="the journey" />}
      {j && <>
        <p data-testid="journey-source">Source: {j.sourceId ? sourceName(sources, j.sourceId) : '—'}</p>
        <Touch j={j} />
        <Shops j={j} />
        <Sessions j={j} />
        <Timeline j={j} />
      </>}
    </main>
  );
}

// The first touch's fields, each shown only when the visit carried it.
const touchFields: [keyof FirstTouch, string][] = [
  ['utmSource', 'UTM source'], ['utmMedium', 'UTM medium'], ['utmCampaign', 'UTM campaign'], ['utmTerm', 'UTM term'],
  ['utmContent', 'UTM content'], ['gclid', 'Click ID gclid'], ['gbraid', 'Click ID gbraid'], ['wbraid', 'Click ID wbraid'],
  ['trackerRef', 'tracker_ref'], ['landingUrl', 'Landing URL'], ['referrer', 'Referrer'],
];

function Touch({ j }: { j: Journey }) {
  const t = j.firstTouch;
  return (
    <section aria-labelledby="touch-h" data-testid="journey-first-touch">
      <h2 id="touch-h">First touch</h2>
      {!t ? <p class="empty">No browser history is stored for this ID (it has not arrived yet, or it is older than the 180-day
        retention): only your server's events are known.</p> : (
        <dl class="facts">
          <dt>When</dt><dd>{formatTimestamp(t.firstSeenAt)}</dd>
          <dt>Landing path</dt><dd>{j.landingPath || '—'}</dd>
          {touchFields.filter(([k]) => t[k]).map(([k, label]) => <Fragment key={k}><dt>{label}</dt><dd data-field={k}>{String(t[k])}</dd></Fragment>)}
          {!touchFields.some(([k]) => t[k]) && <><dt>Campaign</dt><dd>none: no UTM parameter, click ID or tracker_ref on the first visit</dd></>}
          <dt>Page views</dt><dd>{formatCount(t.pageViews)}</dd>
          <dt>Last seen</dt><dd>{formatTimestamp(t.lastSeenAt)}</dd>
        </dl>
      )}
    </section>
  );
}

function Shops({ j }: { j: Journey }) {
  return (
    <section aria-labelledby="shops-h" data-testid="journey-shops">
      <h2 id="shops-h">Shop joined</h2>
      {j.shops.length === 0 ? <p>No verified server event has named a shop with this acquisition ID yet. Your server joins them
        after the platform's authentication: it sends <code>install</code> (or <code>identified</code>, for an existing shop) with
        the acquisition ID it kept in the session and the shop as <code>customerRef</code>.</p> : (
        <ul>{j.shops.map((s) => (
          <li key={s.shop}><a href={href('/customers/' + encodeURIComponent(s.shop))}>{s.shop}</a>: joined {formatTimestamp(s.firstEventAt)} by
            {' '}<code>{s.firstEventName}</code>{s.firstEventName === 'identified' ? ' (a link to a shop that existed before: no new install)' : ''}</li>
        ))}</ul>
      )}
    </section>
  );
}

function Sessions({ j }: { j: Journey }) {
  if (j.sessions.length === 0) return null;
  return (
    <table data-testid="journey-sessions">
      <caption>Sessions, oldest first (a new session after 30 minutes without an event)</caption>
      <thead><tr><th scope="col" class="text">Started</th><th scope="col" class="text">Last event</th><th scope="col">Page views</th>
        <th scope="col">Events</th><th scope="col" class="text">Landing path</th></tr></thead>
      <tbody>{j.sessions.map((s) => (
        <tr key={s.sessionId}><td class="text">{formatTimestamp(s.startedAt)}</td><td class="text">{formatTimestamp(s.endedAt)}</td>
          <td>{formatCount(s.pageViews)}</td><td>{formatCount(s.events)}</td><td class="text">{s.landingPath || '—'}</td></tr>
      ))}</tbody>
    </table>
  );
}

function Timeline({ j }: { j: Journey }) {
  return (
    <table data-testid="journey-events" class="events">
      <caption>Every event, oldest first{j.truncated ? ' (the newest 500 of more)' : ''}</caption>
      <thead><tr><th scope="col" class="text">When</th><th scope="col" class="text">Evidence</th><th scope="col" class="text">Event</th>
        <th scope="col" class="text">Session</th><th scope="col" class="text">Shop</th><th scope="col" class="text">Details</th></tr></thead>
      <tbody>{j.events.map((ev) => (
        <tr key={ev.evidence + ev.sourceId + ev.eventId} data-event={ev.eventId} data-evidence={ev.evidence}>
          <td class="text">{formatTimestamp(ev.occurredAt)}</td><td class="text"><Badge evidence={ev.evidence} /></td>
          <td class="text"><code>{ev.name}</code> <span class="kind">{kindOf(ev)}</span></td>
          <td class="text">{ev.sessionId ? 'session ' + (j.sessions.findIndex((s) => s.sessionId === ev.sessionId) + 1) : '—'}</td>
          <td class="text">{ev.shop || '—'}</td><td class="text">{details(ev)}</td>
        </tr>
      ))}</tbody>
    </table>
  );
}
