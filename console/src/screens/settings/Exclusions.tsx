// Customer exclusions: shops kept out of the numbers (development and partner stores), for every
// app or one, with a reason; lifting one puts the shop back (after a confirmation).
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { ErrorBox, Loading } from '../../components/Status';
import { formatTimestamp } from '../../format';
import { workspace } from '../../session';
import { useLoad } from '../../useLoad';
import { Confirm, FieldError, Note, useRole } from './common';

type Exclusion = components['schemas']['CustomerExclusion'];

export function Exclusions() {
  const { mayAct } = useRole();
  const [tick, setTick] = useState(0);
  const [lifted, setLifted] = useState(false);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [lifting, setLifting] = useState<Exclusion | null>(null);
  const [reason, setReason] = useState('');
  const r = useLoad(`${workspace.value}${tick}${lifted}`, async () =>
    unwrap(await api.GET('/api/admin/customer-exclusions', { params: { query: lifted ? { lifted: true } : {} } })));
  const lift = async (x: Exclusion) => {
    try {
      unwrap(await api.DELETE('/api/admin/customer-exclusions', { params: { query: { shopDomain: x.shopDomain, ...(x.appId ? { appId: x.appId } : {}), ...(reason ? { reason } : {}) } } }));
      setNote({ ok: true, text: `${x.shopDomain} counts again${x.appId ? ` in ${x.appId}` : ''}.` });
      setTick((t) => t + 1);
    } catch (err) { setNote({ ok: false, text: (err as Error).message }); }
    setLifting(null);
  };
  return (
    <section aria-labelledby="exclusions-title">
      <h2 id="exclusions-title">Customer exclusions</h2>
      <p class="note">An excluded shop (a development or partner store, a test account) leaves every metric, list and MCP answer; its detail still
        opens, marked excluded. Without an app, the rule covers every app.</p>
      {mayAct && <Exclude onDone={(text) => { setNote({ ok: true, text }); setTick((t) => t + 1); }} />}
      <Note note={note} />
      {lifting && <Confirm title={`Count ${lifting.shopDomain} again?`} action="Lift the exclusion" onConfirm={() => lift(lifting)} onCancel={() => setLifting(null)}>
        <p>Its revenue returns to every metric{lifting.appId ? ` of ${lifting.appId}` : ''} at once.</p>
        <label>Reason for lifting (optional, kept in the audit log) <input value={reason} onInput={(e) => setReason(e.currentTarget.value)} /></label>
      </Confirm>}
      <label class="inline"><input type="checkbox" checked={lifted} onChange={(e) => setLifted(e.currentTarget.checked)} /> Show lifted rules too</label>
      {r.error && <ErrorBox error={r.error} />}
      {!r.data && r.loading && <Loading what="exclusions" />}
      {r.data && r.data.exclusions.length === 0 && <div class="empty"><p>No shop is excluded: every customer counts.{mayAct ? ' Exclude development and partner stores above.' : ''}</p></div>}
      {r.data && r.data.exclusions.length > 0 && <table data-testid="exclusions">
        <caption>Excluded shops</caption>
        <thead><tr><th scope="col">Shop</th><th scope="col" class="text">App</th><th scope="col" class="text">State</th><th scope="col" class="text">Reason</th>
          <th scope="col" class="text">Changed</th>{mayAct && <th scope="col" class="text">Actions</th>}</tr></thead>
        <tbody>{r.data.exclusions.map((x) => (
          <tr key={x.shopDomain + x.appId}><th scope="row">{x.shopDomain}</th><td class="text">{x.appId || 'every app'}</td>
            <td class="text">{x.excluded ? 'excluded' : 'lifted'}</td><td class="text">{x.reason || '—'}</td><td class="text">{formatTimestamp(x.updatedAt)}</td>
            {mayAct && <td class="text">{x.excluded && <button type="button" onClick={() => { setNote(null); setReason(''); setLifting(x); }}>
              Lift <span class="sr">the exclusion of {x.shopDomain}</span></button>}</td>}</tr>))}</tbody>
      </table>}
    </section>
  );
}

function Exclude({ onDone }: { onDone: (text: string) => void }) {
  const [shop, setShop] = useState('');
  const [app, setApp] = useState('');
  const [reason, setReason] = useState('');
  const [err, setErr] = useState<{ field: 'shop' | 'app' | 'form'; text: string } | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setErr(null);
    try {
      const { exclusion } = unwrap(await api.POST('/api/admin/customer-exclusions', { body: { shopDomain: shop, ...(app ? { appId: app } : {}), ...(reason ? { reason } : {}) } }));
      setShop(''); setReason('');
      onDone(`${exclusion.shopDomain} is excluded${exclusion.appId ? ` from ${exclusion.appId}` : ' from every app'}.`);
    } catch (x) {
      const m = (x as Error).message;
      setErr({ field: /shop ?domain/i.test(m) ? 'shop' : /app/i.test(m) ? 'app' : 'form', text: m });
    }
  };
  return (
    <form class="filters" onSubmit={submit} aria-label="Exclude a shop">
      <label>Shop domain <input value={shop} placeholder="store.myshopify.com" onInput={(e) => setShop(e.currentTarget.value)} aria-invalid={err?.field === 'shop'}
        aria-describedby={err?.field === 'shop' ? 'excl-shop-error' : undefined} />
        <FieldError id="excl-shop-error" text={err?.field === 'shop' ? err.text : undefined} /></label>
      <label>App ID (empty: every app) <input value={app} onInput={(e) => setApp(e.currentTarget.value)} aria-invalid={err?.field === 'app'}
        aria-describedby={err?.field === 'app' ? 'excl-app-error' : undefined} />
        <FieldError id="excl-app-error" text={err?.field === 'app' ? err.text : undefined} /></label>
      <label>Reason <input value={reason} onInput={(e) => setReason(e.currentTarget.value)} /></label>
      <button type="submit">Exclude</button>
      {err?.field === 'form' && <FieldError id="excl-form-error" text={err.text} />}
    </form>
  );
}
