// The source's status panel: what it received and what it refused, from GET
// /api/v1/tracking/sources/{id}/status, refreshed while the page is open, with docs/TRACKING.md's
// verification order as a checklist that ticks itself and its troubleshooting conditions.
import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { ErrorBox, Loading } from '../../components/Status';
import { formatCount, formatTimestamp } from '../../format';
import { workspace } from '../../session';
import { checklist, nextStep } from './checklist';

type Source = components['schemas']['Source'];
type Status = components['schemas']['Troubleshooting'];

export const REFRESH_MS = 5000;

const conditionNames: Record<string, string> = {
  origin_not_allowed: 'Origin not allowed',
  source_unavailable: 'Tracking source unavailable',
  no_page_view: 'No page view',
  no_lifecycle_event: 'No lifecycle event',
};

export const keyReasons: Record<string, string> = {
  public_key_rotated: 'a rotated public key: update data-key on the page and REVTRACK_TRACKER_PK on the server',
  private_key_refused: 'a private key (or team slug) that does not match this source: REVTRACK_TRACKER_SK was rotated or is wrong',
  source_disabled: 'the source is disabled',
};

const when = (n: number, at: string | null | undefined) => (n > 0 ? `${formatTimestamp(at)} (${formatCount(n)} in all)` : 'none yet');

export function StatusPanel({ source }: { source: Source }) {
  const [st, setSt] = useState<Status | null>(null);
  const [error, setError] = useState<(Error & { code?: string }) | null>(null);
  const [at, setAt] = useState('');
  useEffect(() => {
    let live = true;
    setSt(null);
    // The last answer stays on screen while the next loads: no flicker every refresh.
    const load = async () => {
      try {
        const d = unwrap(await api.GET('/api/v1/tracking/sources/{id}/status', { params: { path: { id: source.id } } }));
        if (live) { setSt(d); setError(null); setAt(new Date().toISOString()); }
      } catch (err) { if (live) setError(err as Error); }
    };
    load();
    const t = setInterval(load, REFRESH_MS);
    return () => { live = false; clearInterval(t); };
  }, [source.id, workspace.value]);

  return (
    <section aria-labelledby="status-title" data-testid="source-status">
      <h2 id="status-title">Status</h2>
      {error && <ErrorBox error={error} />}
      {!st && !error && <Loading what="the source's status" />}
      {st && <StatusBody st={st} at={at} />}
    </section>
  );
}

function StatusBody({ st, at }: { st: Status; at: string }) {
  const steps = checklist(st);
  const next = nextStep(steps);
  const ref = st.refusals;
  return (
    <>
      <p class="note">Since {formatTimestamp(st.since)}; refreshed every {REFRESH_MS / 1000} s while this page is open (last {formatTimestamp(at)}).</p>
      {st.pageViews.count === 0 && <div class="empty" data-testid="no-page-view"><h3>No page view yet</h3>
        <p>No page view yet: check the snippet, the public key and the allowed origin. The script tag below must be on a page of an allowed
          origin (scheme, host and port exactly), with this source's current public key, and the browser's request to <code>/v1/collect</code> must
          be answered 202.</p></div>}
      <dl class="facts" data-testid="status-facts">
        <dt>Last page view</dt><dd data-testid="last-page-view">{when(st.pageViews.count, st.pageViews.lastAt)}</dd>
        <dt>Last server event</dt><dd data-testid="last-server-event">{when(st.lifecycleEvents.count, st.lifecycleEvents.lastAt)}
          {st.identifiedEvents > 0 ? `, of which ${formatCount(st.identifiedEvents)} identified (links, not conversions)` : ''}</dd>
        <dt>Click evidence</dt><dd>{formatCount(st.clickEvidence.browserEvents)} browser events from {formatCount(st.clickEvidence.acquisitions)} browsers,
          {' '}{formatCount(st.clickEvidence.lifecycleEvents)} verified events</dd>
        <dt>Refused origins{ref ? ` since ${formatTimestamp(ref.since)}` : ''}</dt>
        <dd data-testid="refused-origins">{!ref ? 'not recorded by this server'
          : ref.origins.length === 0 ? 'none'
            : <ul>{ref.origins.map((o) => <li key={o.origin}><code>{o.origin}</code>: {formatCount(o.count)}, last {formatTimestamp(o.lastAt)}
              {' '}(not an allowed origin: add it exactly, or fix the page's address)</li>)}</ul>}</dd>
        <dt>Refused keys{ref ? ` since ${formatTimestamp(ref.since)}` : ''}</dt>
        <dd data-testid="refused-keys">{!ref ? 'not recorded by this server'
          : ref.keys.length === 0 ? 'none'
            : <ul>{ref.keys.map((k) => <li key={k.reason}>{keyReasons[k.reason] || k.reason}: {formatCount(k.count)}, last {formatTimestamp(k.lastAt)}</li>)}</ul>}</dd>
      </dl>
      <h3 id="checklist-title">Verify, in this order</h3>
      <ol class="source-checklist" aria-labelledby="checklist-title" data-testid="checklist">
        {steps.map((s) => (
          <li key={s.id} data-step={s.id} data-done={String(s.done)}>
            <span aria-hidden="true">{s.done ? '✓' : '○'}</span> <strong>{s.title}</strong>: {s.done ? 'done' : 'not yet'}
            {!s.done && s === next && <> — next: {s.how}</>}
            {s.id === 'ad-upload' && <> (<a href="#/ads">Ads</a>)</>}
          </li>
        ))}
      </ol>
      <table data-testid="conditions">
        <caption>Troubleshooting conditions</caption>
        <thead><tr><th scope="col" class="text">Condition</th><th scope="col" class="text">Now</th><th scope="col" class="text">What to check</th></tr></thead>
        <tbody>{st.conditions.map((c) => (
          <tr key={c.code} data-code={c.code} data-detected={String(c.detected)}>
            <th scope="row" class="text">{conditionNames[c.code] || c.code}</th>
            <td class="text">{!c.checked ? 'not observable here' : c.detected ? 'detected' : 'not detected'}</td>
            <td class="text">{c.message}</td>
          </tr>
        ))}</tbody>
      </table>
    </>
  );
}
