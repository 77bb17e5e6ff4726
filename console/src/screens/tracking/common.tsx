// What the Tracking and Funnel screens share: the evidence badge, the sources' names, the event
// names a person picks from, and what to do when nothing has arrived yet.
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { workspace } from '../../session';
import { useLoad } from '../../useLoad';

export type TrackingEvent = components['schemas']['TrackingEvent'];
export type Source = components['schemas']['Source'];

// The spec's two evidence badges: a browser event is not proof of payment; a server event was
// verified by the publisher's server before it was sent.
export const evidenceMeaning: Record<TrackingEvent['evidence'], string> = {
  Browser: 'sent by tracker.js from a visitor\'s browser: shows the visit, is not proof of an install or a payment',
  Server: 'sent by your server with the source\'s private key after it verified the event with the platform',
};

export function Badge({ evidence }: { evidence: TrackingEvent['evidence'] }) {
  return <span class={`badge badge-${evidence.toLowerCase()}`} data-evidence={evidence}>{evidence}</span>;
}

// Names a person filters by (any other, a custom event's, can be typed).
export const browserNames = ['page_view', 'platform_context'];
export const lifecycleNames = ['install', 'trial_started', 'trial_converted', 'paid', 'qualified', 'identified', 'canceled', 'churned', 'refunded'];

// What kind of event a name is, in words.
export function kindOf(ev: Pick<TrackingEvent, 'evidence' | 'name'>): string {
  if (ev.evidence === 'Server') return ev.name === 'identified' ? 'link to a shop (not a conversion)' : 'verified lifecycle event';
  if (ev.name === 'page_view') return 'page view';
  if (ev.name === 'platform_context') return 'embedded-app context';
  return 'custom event';
}

// useSources lists the workspace's tracking sources (members may read them), for names and filters.
export function useSources() {
  const r = useLoad('sources' + workspace.value, async () => unwrap(await api.GET('/api/admin/sources')));
  return r.data?.sources ?? [];
}

export function sourceName(sources: Source[], id: string): string {
  const s = sources.find((x) => x.id === id);
  return s ? `${s.name} (${s.appId})` : id;
}

// NothingYet is the empty state of a workspace whose sources received nothing in the range: the
// spec's troubleshooting conditions, in the order to check them.
export function NothingYet({ what, sources }: { what: string; sources: Source[] }) {
  return (
    <section class="empty" data-testid="tracking-empty" aria-label={`No ${what}`}>
      <h2>No {what} in this range yet</h2>
      {sources.length === 0
        ? <p>There is no tracking source yet. <a href="#/sources">Create one</a> for the app (owners and admins), with the exact
          origins of its pages, then put the snippet with its public key on those pages.</p>
        : <p>What to check, in this order (each source's status panel on <a href="#/sources">Sources</a> checks it for you):</p>}
      <ol>
        <li>No page view: the snippet loads <code>/v1/tracker.js</code> with <code>data-key</code> set to the source's public key, and the
          browser's network tab shows its request answered.</li>
        <li>Origin not allowed: the page's origin (scheme, host and port) is exactly one of the source's allowed origins.</li>
        <li>Source unavailable: the source is enabled and the key on the page is the current one (rotating a key invalidates the previous one).</li>
        <li>No lifecycle event: your server sends <code>install</code>, <code>trial_started</code>, <code>paid</code>… with the team slug, the
          private key, an allowed event name and an ISO 8601 <code>occurredAt</code>, and the browser's acquisition ID.</li>
      </ol>
      <p>Or widen the range.</p>
    </section>
  );
}
