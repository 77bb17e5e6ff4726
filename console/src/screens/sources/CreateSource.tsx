// Creation of a tracking source: an app of the workspace, a name and the exact allowed origins, one
// per line. The API validates them (docs/TRACKING.md, section 1); its refusal is shown next to the
// field it concerns. On success the source's page opens with the private key, shown this once.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import { navigate } from '../../router';
import { workspace } from '../../session';
import { useLoad } from '../../useLoad';
import { fieldOf, freshKey } from './access';

// The workspace's apps: the summary's coverage lists every selected app of the workspace.
async function loadApps(): Promise<string[]> {
  const s = unwrap(await api.GET('/api/v1/summary'));
  return (s.coverage.apps || []).map((a) => a.appId).sort();
}

export function CreateSource() {
  const apps = useLoad('apps' + workspace.value, loadApps);
  const [appId, setAppId] = useState('');
  const [name, setName] = useState('');
  const [origins, setOrigins] = useState('');
  const [refusal, setRefusal] = useState<{ field: string; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const app = appId || apps.data?.[0] || '';
  const submit = async (e: Event) => {
    e.preventDefault();
    setRefusal(null);
    setBusy(true);
    try {
      const allowedOrigins = origins.split(/[\s,]+/).filter(Boolean);
      const created = unwrap(await api.POST('/api/admin/sources', { body: { appId: app, name, allowedOrigins } }));
      freshKey.value = { sourceId: created.source.id, privateKey: created.privateKey, why: 'The source was created.' };
      navigate('/sources/' + encodeURIComponent(created.source.id));
    } catch (err) {
      const text = (err as Error).message;
      setRefusal({ field: fieldOf(text), text });
    } finally { setBusy(false); }
  };
  const err = (field: string) => refusal && refusal.field === field
    ? <span id={`create-${field}-error`} class="error" role="alert">{refusal.text}</span> : null;
  const described = (field: string) => (refusal && refusal.field === field ? `create-${field}-error` : undefined);
  return (
    <form onSubmit={submit} aria-labelledby="create-title" class="create-source" data-testid="create-source">
      <h2 id="create-title">Create a tracking source</h2>
      <label>App of the source <select value={app} onChange={(e) => setAppId(e.currentTarget.value)} aria-describedby={described('appId')}>
        {(apps.data || []).map((a) => <option key={a} value={a}>{a}</option>)}</select></label>
      {apps.error && <span class="error" role="alert">Could not list the apps: {apps.error.message}</span>}
      {err('appId')}
      <label>Name <input value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="Install page" aria-describedby={described('name')} /></label>
      {err('name')}
      <label>Allowed origins (one per line)
        <textarea rows={3} value={origins} onInput={(e) => setOrigins(e.currentTarget.value)} required
          placeholder={'https://app.example.com\nhttp://localhost:3000'} aria-describedby={`origins-rule${described('allowedOrigins') ? ' create-allowedOrigins-error' : ''}`} /></label>
      <span id="origins-rule" class="note">Exact origins: scheme, host and port, no path. HTTPS, or plain HTTP for localhost and 127.0.0.1 only.{' '}
        <code>https://app.example.com</code> and <code>https://www.app.example.com</code> are two origins.</span>
      {err('allowedOrigins')}
      {err('')}
      <button type="submit" disabled={busy || !app}>{busy ? 'Creating…' : 'Create source'}</button>
    </form>
  );
}
