// API and MCP keys: create a named key (its value shown once), list them with creation and last
// use, revoke one after a confirmation (it stops working at once; the other keys go on).
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { ErrorBox, Loading } from '../../components/Status';
import { formatTimestamp } from '../../format';
import { workspace } from '../../session';
import { useLoad } from '../../useLoad';
import { Confirm, CopyButton, FieldError, Note, type Refusal, useRole } from './common';
import { justCreatedKey } from './state';

type APIKey = components['schemas']['APIKey'];
type Scope = APIKey['scope'];

export function Keys() {
  const { mayAct, owner } = useRole();
  const [tick, setTick] = useState(0);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [revoking, setRevoking] = useState<APIKey | null>(null);
  const [busy, setBusy] = useState(false);
  const r = useLoad(workspace.value + tick, async () => unwrap(await api.GET('/api/admin/keys')));
  const created = justCreatedKey.value?.workspace === workspace.value ? justCreatedKey.value : null;

  const revoke = async (k: APIKey) => {
    setBusy(true);
    try {
      unwrap(await api.POST('/api/admin/keys/{id}/revoke', { params: { path: { id: k.id } } }));
      setNote({ ok: true, text: `The key “${k.name}” is revoked: anything that uses it is refused (401) from now on; the other keys work as before.` });
      setTick((t) => t + 1);
    } catch (err) {
      setNote({ ok: false, text: (err as Error).message });
    }
    setBusy(false);
    setRevoking(null);
  };

  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API and MCP keys</h2>
      <p class="note">A key reads every selected app of this workspace through the REST API (<code>/api/v1</code>) and the MCP server
        (<code>/api/mcp</code>), and may send server events. Name one key per integration, so that revoking one stops only that integration.
        Keep keys in environment variables or a secret store, never in browser code, URLs or repositories.</p>
      {mayAct && <CreateKey owner={owner} onCreated={(name, value) => {
        justCreatedKey.value = { workspace: workspace.value, name, value };
        setNote(null);
        setTick((t) => t + 1);
      }} />}
      {created && <OneTimeValue name={created.name} value={created.value} onDone={() => { justCreatedKey.value = null; }} />}
      <Note note={note} />
      {revoking && <Confirm title={`Revoke the key “${revoking.name}”?`} action="Revoke the key" busy={busy}
        onConfirm={() => revoke(revoking)} onCancel={() => setRevoking(null)}>
        <p>Every integration that uses this key is refused (401) at once, MCP sessions included. This cannot be undone: create a new key to
          replace it. The other keys keep working.</p>
      </Confirm>}
      {r.error && <ErrorBox error={r.error} />}
      {!r.data && r.loading && <Loading what="keys" />}
      {r.data && r.data.keys.length === 0 && <div class="empty"><p>No keys yet. {mayAct
        ? 'Create one above for each integration (a reporting script, an AI assistant).'
        : 'Ask an owner or admin of this workspace to create one.'}</p></div>}
      {r.data && r.data.keys.length > 0 && <table data-testid="keys">
        <caption>Keys of this workspace (values are never shown again; last use is recorded to the minute)</caption>
        <thead><tr><th scope="col">Name</th><th scope="col" class="text">Scope</th><th scope="col" class="text">Created</th>
          <th scope="col" class="text">Last used</th><th scope="col" class="text">State</th>{mayAct && <th scope="col" class="text">Actions</th>}</tr></thead>
        <tbody>{r.data.keys.map((k) => (
          <tr key={k.id} data-key-id={k.id}><th scope="row">{k.name}</th><td class="text">{k.scope}</td>
            <td class="text">{formatTimestamp(k.createdAt)}</td>
            <td class="text">{k.lastUsedAt ? formatTimestamp(k.lastUsedAt) : 'never'}</td>
            <td class="text">{k.revokedAt ? `revoked ${formatTimestamp(k.revokedAt)}` : 'active'}</td>
            {mayAct && <td class="text">{!k.revokedAt &&
              <button type="button" onClick={() => { setNote(null); setRevoking(k); }}>Revoke <span class="sr">{k.name}</span></button>}</td>}
          </tr>))}</tbody>
      </table>}
    </section>
  );
}

function CreateKey({ owner, onCreated }: { owner: boolean; onCreated: (name: string, value: string) => void }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<Scope>('read');
  const [err, setErr] = useState<{ field: 'name' | 'scope' | 'form'; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setErr(null);
    setBusy(true);
    try {
      const res = unwrap(await api.POST('/api/admin/keys', { body: { name, scope } }));
      onCreated(res.key.name, res.value);
      setName('');
    } catch (x) {
      const ref = x as Refusal;
      // The refusal goes next to the field it is about: an admin scope needs an owner; a name is required.
      const field = ref.status === 403 || /scope/i.test(ref.message) ? 'scope' : /name/i.test(ref.message) ? 'name' : 'form';
      setErr({ field, text: ref.message });
    }
    setBusy(false);
  };
  return (
    <form class="filters" onSubmit={submit} aria-label="Create a key">
      <label>Key name (the integration it is for)
        <input value={name} onInput={(e) => setName(e.currentTarget.value)} aria-invalid={err?.field === 'name'}
          aria-describedby={err?.field === 'name' ? 'key-name-error' : undefined} />
        <FieldError id="key-name-error" text={err?.field === 'name' ? err.text : undefined} /></label>
      <label>Scope
        <select value={scope} onChange={(e) => setScope(e.currentTarget.value as Scope)} aria-invalid={err?.field === 'scope'}
          aria-describedby={err?.field === 'scope' ? 'key-scope-error' : 'key-scope-help'}>
          <option value="read">read: reports, MCP, server events</option>
          <option value="admin">admin: also the admin API{owner ? '' : ' (owners only)'}</option>
        </select>
        {err?.field === 'scope' ? <FieldError id="key-scope-error" text={err.text} />
          : <span id="key-scope-help" class="kind">An admin key can do all an owner can.</span>}</label>
      <button type="submit" disabled={busy}>{busy ? 'Creating…' : 'Create key'}</button>
      {err?.field === 'form' && <FieldError id="key-form-error" text={err.text} />}
    </form>
  );
}

function OneTimeValue({ name, value, onDone }: { name: string; value: string; onDone: () => void }) {
  return (
    <section class="warning" aria-labelledby="new-key-title" data-testid="new-key">
      <h3 id="new-key-title">The key “{name}”</h3>
      <p><strong>Copy it now: you will not see this again.</strong> Only its hash is stored; if it is lost, create another and revoke this one.</p>
      <p><label>Value of the new key <input readOnly value={value} size={80} data-testid="new-key-value" onFocus={(e) => e.currentTarget.select()} /></label>{' '}
        <CopyButton text={value} what="the new key" /></p>
      <p><a href="#/settings/assistant">Connect an AI assistant with it</a> · <button type="button" onClick={onDone}>I have stored it: hide the value</button></p>
    </section>
  );
}
