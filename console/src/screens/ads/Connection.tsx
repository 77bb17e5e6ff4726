// The Google Ads connection: connect (the OAuth redirect: this page goes to Google's consent and the
// callback page links back here), the conversion and manager accounts, the conversion actions, and
// disconnect with a confirmation. A revocation Google does not confirm leaves the connection as it
// was and is shown as an error with Retry (spec "Connection").
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import { formatTimestamp } from '../../format';
import { describedBy, FieldError, fieldOf, type Refusal, type Schemas } from './shared';

type View = Schemas['AdsConnectionView'];
type Action = Schemas['AdConversionAction'];

export function Connection({ view, actions, mayAct, onChange, actorName }: {
  view: View; actions: Action[] | undefined; mayAct: boolean; onChange: () => void; actorName: (actor: string) => string;
}) {
  const [note, setNote] = useState<{ ok: boolean; text: string; retry?: boolean } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const c = view.connection;
  const connected = view.state === 'connected' && c;

  const connect = async () => {
    setNote(null);
    setBusy(true);
    try {
      const { authorizationUrl } = unwrap(await api.POST('/api/admin/ads/connection', {}));
      // The begin link binds this browser to the flow and sends it on to Google's consent page.
      location.assign(authorizationUrl);
    } catch (err) { setNote({ ok: false, text: (err as Error).message }); setBusy(false); }
  };
  const disconnect = async () => {
    setConfirming(false);
    setNote(null);
    setBusy(true);
    try {
      unwrap(await api.DELETE('/api/admin/ads/connection', {}));
      setNote({ ok: true, text: 'Disconnected: Google revoked the credential, which is erased here; enabled mappings are disabled; mappings and queue rows are kept.' });
    } catch (err) {
      const e = err as Error & { code?: string };
      // Google did not confirm the revocation: the connection and its credential stay, retry.
      setNote({ ok: false, text: e.message, retry: e.code === 'revocation_unconfirmed' || e.code === 'unavailable' });
    } finally { setBusy(false); onChange(); }
  };

  return (
    <section class="ads-panel" aria-labelledby="ads-connection">
      <h2 id="ads-connection">Google Ads connection</h2>
      {!view.configured && <p class="warning" role="status">This deployment has no Google OAuth client (<code>--ads-oauth-client-id</code>), so connecting is off.
        {connected ? ' The existing connection can still be disconnected.' : ' Ask whoever runs revtrack to configure it.'}</p>}
      {connected
        ? <dl class="facts" data-testid="ads-connection">
            <dt>State</dt><dd data-testid="ads-state">connected</dd>
            <dt>Google account</dt><dd>{c.googleAccountEmail || c.googleAccountId || 'not recorded'}</dd>
            <dt>Connected</dt><dd>{formatTimestamp(c.createdAt)} by {actorName(c.connectedBy)}</dd>
            <dt>Permissions granted</dt><dd>{c.grantedScopes.length ? c.grantedScopes.join(', ') : 'none (reconnect)'}</dd>
          </dl>
        : <p data-testid="ads-state-text">Not connected. {mayAct
            ? 'Connect sends you to Google to allow uploads (and listing your conversion actions), then back here.'
            : 'An owner or admin of this workspace connects it.'}</p>}
      {c?.lastError && <p class="error" role="alert" data-testid="ads-last-error">Last error: {c.lastError}</p>}
      {note && <div role={note.ok ? 'status' : 'alert'} class={note.ok ? 'ok' : 'error'} data-testid="ads-connection-note">
        <p>{note.text}</p>{note.retry && mayAct && <button type="button" onClick={disconnect} disabled={busy}>Retry disconnect</button>}</div>}
      {mayAct && view.configured && <p><button type="button" onClick={connect} disabled={busy}>{connected ? 'Reconnect Google Ads' : 'Connect Google Ads'}</button></p>}
      {connected && <Account view={view} mayAct={mayAct} onChange={onChange} />}
      {connected && <Actions view={view} actions={actions} mayAct={mayAct} onChange={onChange} />}
      {connected && mayAct && !confirming && <p><button type="button" onClick={() => setConfirming(true)} disabled={busy}>Disconnect…</button></p>}
      {confirming && <div class="ads-confirm" role="group" aria-labelledby="ads-disconnect-q">
        <p id="ads-disconnect-q"><strong>Disconnect Google Ads?</strong> revtrack asks Google to revoke its access and erases the stored credential;
          every enabled mapping is disabled and nothing uploads until you connect and map again. Mappings and queue rows are kept for audit.
          If Google does not confirm the revocation, nothing changes and you can retry.</p>
        <button type="button" onClick={disconnect}>Disconnect</button>{' '}
        <button type="button" onClick={() => setConfirming(false)}>Cancel</button>
      </div>}
    </section>
  );
}

// Account: the conversion customer and the optional manager (10 digits each, as Google shows them
// or as digits); the API's refusal is shown under the field it names.
function Account({ view, mayAct, onChange }: { view: View; mayAct: boolean; onChange: () => void }) {
  const c = view.connection!;
  const [customer, setCustomer] = useState(c.conversionCustomerId);
  const [manager, setManager] = useState(c.loginCustomerId);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [note, setNote] = useState('');
  const save = async (e: Event) => {
    e.preventDefault();
    setRefusal(null);
    setNote('');
    try {
      const sel = unwrap(await api.PUT('/api/admin/ads/connection/account', { body: { conversionCustomerId: customer, loginCustomerId: manager } }));
      const disabled = sel.disabledMappings.length;
      setNote(`Saved: conversion account ${sel.connection.conversionCustomerId}${sel.connection.loginCustomerId ? ` through manager ${sel.connection.loginCustomerId}` : ''}.`
        + (disabled ? ` ${disabled} mapping(s) of the previous account were disabled: create new ones.` : '')
        + (sel.actionsError ? ` The conversion actions could not be listed: ${sel.actionsError}` : ''));
      onChange();
    } catch (err) {
      const m = (err as Error).message;
      setRefusal({ field: fieldOf(m, [[/manager|login customer/i, 'manager'], [/conversion customer/i, 'customer']]), message: m });
    }
  };
  if (!mayAct) {
    return <p data-testid="ads-account">Conversion account: {c.conversionCustomerId || 'not selected'}{c.loginCustomerId ? `, through manager ${c.loginCustomerId}` : ''}.</p>;
  }
  return (
    <form class="ads-form" onSubmit={save} aria-labelledby="ads-account-h" data-testid="ads-account">
      <h3 id="ads-account-h" class="sr">Conversion account</h3>
      <label>Conversion customer ID (10 digits)
        <input value={customer} onInput={(e) => setCustomer(e.currentTarget.value)} inputMode="numeric" autoComplete="off" placeholder="123-456-7890"
          aria-invalid={refusal?.field === 'customer' || undefined} aria-describedby={describedBy('ads-customer-err', refusal, 'customer')} />
        <FieldError id="ads-customer-err" refusal={refusal} field="customer" />
      </label>
      <label>Manager login customer ID (optional)
        <input value={manager} onInput={(e) => setManager(e.currentTarget.value)} inputMode="numeric" autoComplete="off" placeholder="only through a manager"
          aria-invalid={refusal?.field === 'manager' || undefined} aria-describedby={describedBy('ads-manager-err', refusal, 'manager')} />
        <FieldError id="ads-manager-err" refusal={refusal} field="manager" />
      </label>
      <div class="actions"><button type="submit">Save account</button></div>
      <FieldError id="ads-account-err" refusal={refusal} field="form" />
      <p class="note">The account that owns the conversion actions; the manager only when you reach it through a manager account.
        Changing either disables the existing mappings.</p>
      {note && <p class="ok" role="status">{note}</p>}
    </form>
  );
}

// Actions: the conversion actions of the account as last listed, refreshed from Google Ads on demand.
function Actions({ view, actions, mayAct, onChange }: { view: View; actions: Action[] | undefined; mayAct: boolean; onChange: () => void }) {
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const refresh = async () => {
    setNote(null);
    try {
      const r = unwrap(await api.POST('/api/admin/ads/conversion-actions/refresh', {}));
      setNote({ ok: true, text: `Refreshed: ${r.actions.length} conversion action(s).` });
      onChange();
    } catch (err) { setNote({ ok: false, text: (err as Error).message }); }
  };
  if (!view.ready) return <p class="empty">Select the conversion account above; its conversion actions are listed then.</p>;
  return (
    <div>
      {!view.accountDiscovery && <p class="note">Listing conversion actions from Google Ads is off on this deployment: type the action's numeric ID and name in a mapping.</p>}
      {mayAct && view.accountDiscovery && <button type="button" onClick={refresh}>Refresh conversion actions</button>}
      {note && <p role={note.ok ? 'status' : 'alert'} class={note.ok ? 'ok' : 'error'}>{note.text}</p>}
      {actions && (actions.length
        ? <table data-testid="ads-actions"><caption>Conversion actions of {view.connection!.conversionCustomerId}</caption>
            <thead><tr><th scope="col">ID</th><th scope="col" class="text">Name</th><th scope="col" class="text">Status</th><th scope="col" class="text">Listed</th></tr></thead>
            <tbody>{actions.map((a) => <tr key={a.id}><th scope="row">{a.id}</th><td class="text">{a.name}</td><td class="text">{a.status}</td>
              <td class="text">{formatTimestamp(a.refreshedAt)}</td></tr>)}</tbody></table>
        : <p class="empty">No conversion action listed yet: {view.accountDiscovery ? 'refresh them, or create a click-import (UPLOAD_CLICKS) action in Google Ads first.' : 'type one in a mapping.'}</p>)}
    </div>
  );
}
