// The Partner API connection: its state (never the token), the last sync, and for owners and
// admins connecting (paste the token; it is sealed and never shown again) and disconnecting.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import { ErrorBox, Loading } from '../../components/Status';
import { formatCount, formatTimestamp } from '../../format';
import { workspace } from '../../session';
import { useLoad } from '../../useLoad';
import { Confirm, FieldError, Note, type Refusal, useRole } from './common';

async function load() {
  let connection = null;
  try {
    connection = unwrap(await api.GET('/api/admin/partner-connection')).partnerConnection;
  } catch (err) {
    if ((err as Refusal).status !== 404) throw err; // 404: not connected
  }
  const runs = unwrap(await api.GET('/api/admin/sync-runs', { params: { query: { limit: 1 } } })).runs;
  return { connection, last: runs[0] || null };
}

export function Partner() {
  const { mayAct } = useRole();
  const [tick, setTick] = useState(0);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [confirm, setConfirm] = useState(false);
  const [busy, setBusy] = useState(false);
  const r = useLoad(workspace.value + tick, load);
  const disconnect = async () => {
    setBusy(true);
    try {
      unwrap(await api.DELETE('/api/admin/partner-connection'));
      setNote({ ok: true, text: 'Disconnected: the stored token is erased and no sync runs until a new token is pasted. Synced data stays.' });
      setTick((t) => t + 1);
    } catch (err) { setNote({ ok: false, text: (err as Error).message }); }
    setBusy(false);
    setConfirm(false);
  };
  const c = r.data?.connection, last = r.data?.last;
  return (
    <section aria-labelledby="partner-title">
      <h2 id="partner-title">Partner API connection</h2>
      {r.error && <ErrorBox error={r.error} />}
      {!r.data && r.loading && <Loading what="the partner connection" />}
      {r.data && <dl class="facts" data-testid="partner-state">
        <dt>State</dt><dd data-testid="partner-connected">{c ? `connected to organization ${c.organizationId}` : 'not connected'}</dd>
        {c && <><dt>Since</dt><dd>{formatTimestamp(c.createdAt)}{c.updatedAt !== c.createdAt ? `, token replaced ${formatTimestamp(c.updatedAt)}` : ''}</dd>
          <dt>Token</dt><dd>sealed (key {c.sealedWithKey}); it is never shown again</dd></>}
        <dt>Last sync</dt><dd data-testid="partner-last-sync">{last
          ? <>{last.appId}: {last.status}, started {formatTimestamp(last.startedAt)}{last.finishedAt ? `, finished ${formatTimestamp(last.finishedAt)}` : ''},
            {' '}{formatCount(last.eventsCount)} events and {formatCount(last.transactionsCount)} transactions (<a href="#/sync">all sync runs</a>)</>
          : 'none yet'}</dd>
      </dl>}
      {r.data && !c && <div class="empty"><p>No data is synced without a connection. {mayAct
        ? 'Paste the organization ID and a Partner API token below.' : 'Ask an owner or admin of this workspace to connect it.'}</p></div>}
      <Note note={note} />
      {mayAct && r.data && <Connect replacing={!!c} onDone={(text) => { setNote({ ok: true, text }); setTick((t) => t + 1); }} />}
      {mayAct && c && !confirm && <p><button type="button" onClick={() => { setNote(null); setConfirm(true); }}>Disconnect</button></p>}
      {confirm && <Confirm title="Disconnect the Partner API?" action="Disconnect" busy={busy} onConfirm={disconnect} onCancel={() => setConfirm(false)}>
        <p>The stored token is erased and no sync runs until a token is pasted again. The data synced so far stays.</p>
      </Confirm>}
    </section>
  );
}

function Connect({ replacing, onDone }: { replacing: boolean; onDone: (text: string) => void }) {
  const [org, setOrg] = useState('');
  const [token, setToken] = useState('');
  const [err, setErr] = useState<{ field: 'org' | 'token' | 'form'; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setErr(null);
    setBusy(true);
    try {
      const res = unwrap(await api.PUT('/api/admin/partner-connection', { body: { organizationId: org.trim(), accessToken: token } }));
      setToken('');
      onDone(`Connected to organization ${res.partnerConnection.organizationId}; the token is sealed and will not be shown again.`);
    } catch (x) {
      const m = (x as Error).message;
      setErr({ field: /token/i.test(m) ? 'token' : /organi[sz]ation/i.test(m) ? 'org' : 'form', text: m });
    }
    setBusy(false);
  };
  return (
    <form class="filters" onSubmit={submit} aria-label={replacing ? 'Replace the partner connection' : 'Connect the Partner API'}>
      <label>Organization ID
        <input value={org} onInput={(e) => setOrg(e.currentTarget.value)} inputMode="numeric" aria-invalid={err?.field === 'org'}
          aria-describedby={err?.field === 'org' ? 'partner-org-error' : undefined} />
        <FieldError id="partner-org-error" text={err?.field === 'org' ? err.text : undefined} /></label>
      <label>Partner API access token (never shown again)
        <input type="password" autoComplete="off" value={token} onInput={(e) => setToken(e.currentTarget.value)} aria-invalid={err?.field === 'token'}
          aria-describedby={err?.field === 'token' ? 'partner-token-error' : undefined} />
        <FieldError id="partner-token-error" text={err?.field === 'token' ? err.text : undefined} /></label>
      <button type="submit" disabled={busy}>{busy ? 'Connecting…' : replacing ? 'Replace the token' : 'Connect'}</button>
      {err?.field === 'form' && <FieldError id="partner-form-error" text={err.text} />}
    </form>
  );
}
