// The audit log: who changed what, newest first, filtered by action, actor and dates (the API's
// filters, kept in the fragment so a view can be linked) and paged with the API's cursor.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { ErrorBox, Loading } from '../../components/Status';
import { formatTimestamp } from '../../format';
import { href, navigate, type Route } from '../../router';
import { workspace } from '../../session';
import { useLoad } from '../../useLoad';
import { useRole } from './common';

type Entry = components['schemas']['AuditEntry'];
const PAGE = 25;

// The actions the control plane records, by area; the filter takes a whole name or its area.
export const ACTIONS = ['api_key', 'api_key.create', 'api_key.revoke', 'tracking_source', 'partner', 'partner.connect', 'partner.disconnect',
  'customer', 'member', 'invitation', 'password_reset', 'user', 'user.sign_in', 'ads_connection', 'ads_mapping', 'ads_upload_row',
  'analyst_access', 'sync_run', 'workspace'];

export function Audit({ route }: { route: Route }) {
  const { mayAct } = useRole();
  if (!mayAct) {
    return <section aria-labelledby="audit-title"><h2 id="audit-title">Audit log</h2>
      <div class="empty"><p>The audit log is for owners and admins of this workspace (docs/SECURITY.md, "Roles"); ask one of them.</p></div></section>;
  }
  return <AuditLog route={route} />;
}

function AuditLog({ route }: { route: Route }) {
  const p = route.params;
  const filters = { action: p.get('action') || '', actor: p.get('actor') || '', from: p.get('from') || '', to: p.get('to') || '' };
  // The cursors of the pages before this one, so that "Newer" goes back; the API pages forward only.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1] || '';
  const key = `${workspace.value}|${route.params.toString()}|${cursor}`;
  const r = useLoad(key, async () => unwrap(await api.GET('/api/admin/audit', { params: { query: {
    limit: PAGE, ...(filters.action ? { action: filters.action } : {}), ...(filters.actor ? { actor: filters.actor } : {}),
    ...(filters.from ? { from: filters.from } : {}), ...(filters.to ? { to: filters.to } : {}), ...(cursor ? { cursor } : {}) } } })));
  const names = useLoad(workspace.value, async () => {
    const [m, k] = await Promise.all([api.GET('/api/admin/members'), api.GET('/api/admin/keys')]);
    const out = new Map<string, string>();
    for (const x of unwrap(m).members) out.set(`user:${x.userId}`, x.name ? `${x.name} (${x.email})` : x.email);
    for (const x of unwrap(k).keys) out.set(`key:${x.id}`, `key “${x.name}”`);
    return out;
  });
  const who = (actor: string) => names.data?.get(actor) || actor;
  const apply = (f: typeof filters) => { setCursors([]); navigate('/settings/audit', f); };
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <p class="note">Every change to keys, tracking sources, the partner connection, exclusions, people and the ads setup, and every
        sign-in, with who made it. Newest first; dates are UTC.</p>
      <Filters key={route.params.toString()} value={filters} actors={names.data} onApply={apply} />
      {r.error && <ErrorBox error={r.error} />}
      {!r.data && r.loading && <Loading what="the audit log" />}
      {r.data && r.data.entries.length === 0 && <div class="empty"><p>No entry matches these filters. Widen the dates or
        {' '}<a href={href('/settings/audit')} onClick={() => setCursors([])}>clear the filters</a>.</p></div>}
      {r.data && r.data.entries.length > 0 && <table data-testid="audit">
        <caption>Audit entries{cursors.length ? `, page ${cursors.length + 1}` : ''}</caption>
        <thead><tr><th scope="col">When</th><th scope="col" class="text">Who</th><th scope="col" class="text">Action</th>
          <th scope="col" class="text">Target</th><th scope="col" class="text">Details</th></tr></thead>
        <tbody>{r.data.entries.map((e, i) => <Row key={i} e={e} who={who(e.actor)} />)}</tbody>
      </table>}
      {r.data && (cursors.length > 0 || r.data.nextCursor) && <nav class="pager" aria-label="Audit pages">
        <button type="button" disabled={cursors.length === 0} onClick={() => setCursors((c) => c.slice(0, -1))}>Newer</button>
        <button type="button" disabled={!r.data.nextCursor} onClick={() => r.data?.nextCursor && setCursors((c) => [...c, r.data!.nextCursor!])}>Older</button>
      </nav>}
    </section>
  );
}

function Row({ e, who }: { e: Entry; who: string }) {
  const details = Object.entries(e.details || {});
  return (
    <tr data-action={e.action}><th scope="row">{formatTimestamp(e.at)}</th><td class="text">{who}</td><td class="text"><code>{e.action}</code></td>
      <td class="text">{e.targetType}{e.targetId ? ` ${e.targetId}` : ''}</td>
      <td class="text">{details.length ? details.map(([k, v]) => `${k}: ${v}`).join('; ') : '—'}</td></tr>
  );
}

type F = { action: string; actor: string; from: string; to: string };

function Filters({ value, actors, onApply }: { value: F; actors: Map<string, string> | undefined; onApply: (f: F) => void }) {
  const [f, setF] = useState<F>(value);
  const set = (k: keyof F) => (e: Event) => setF({ ...f, [k]: (e.currentTarget as HTMLInputElement).value });
  return (
    <form class="filters" aria-label="Filter the audit log" onSubmit={(e) => { e.preventDefault(); onApply(f); }}>
      <label>Action (a name or its first part)
        <input list="audit-actions" value={f.action} onInput={set('action')} /></label>
      <datalist id="audit-actions">{ACTIONS.map((a) => <option key={a} value={a} />)}</datalist>
      <label>Who
        <select value={f.actor} onChange={set('actor')}>
          <option value="">anyone</option>
          {[...(actors || new Map<string, string>()).entries()].map(([id, name]) => <option key={id} value={id}>{name}</option>)}
          {f.actor && !actors?.has(f.actor) && <option value={f.actor}>{f.actor}</option>}
        </select></label>
      <label>From <input type="date" value={f.from} onInput={set('from')} /></label>
      <label>To <input type="date" value={f.to} onInput={set('to')} /></label>
      <button type="submit">Apply</button>
    </form>
  );
}
