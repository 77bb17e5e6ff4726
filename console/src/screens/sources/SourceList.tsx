// The workspace's tracking sources, and the creation form for owners and admins.
import { api, unwrap } from '../../api/client';
import { ErrorBox, Loading } from '../../components/Status';
import { formatTimestamp } from '../../format';
import { href } from '../../router';
import { workspace } from '../../session';
import { useLoad } from '../../useLoad';
import { canManage } from './access';
import { CreateSource } from './CreateSource';

export function SourceList() {
  const r = useLoad('sources' + workspace.value, async () => unwrap(await api.GET('/api/admin/sources')));
  const manage = canManage();
  return (
    <main id="main" aria-labelledby="title">
      <h1 id="title">Tracking sources</h1>
      <p class="note">A tracking source belongs to one app and lists the exact origins (scheme, host and port) whose pages may send browser
        events with its public key; your server sends verified lifecycle events with its private key. {manage
          ? 'Create one per site or install page.'
          : 'Owners and admins create and change sources; you can read them.'}</p>
      {manage && <CreateSource />}
      {r.error && <ErrorBox error={r.error} />}
      {!r.data && r.loading && <Loading what="tracking sources" />}
      {r.data && r.data.sources.length === 0 && <div class="empty" data-testid="sources-empty"><h2>No tracking source yet</h2>
        <p>{manage ? 'Create one above for the app whose pages you want to track, then add its script to those pages.'
          : 'Ask an owner or admin of this workspace to create one for the app whose pages you want to track.'}</p></div>}
      {r.data && r.data.sources.length > 0 && <table data-testid="sources">
        <caption>Tracking sources of this workspace</caption>
        <thead><tr><th scope="col" class="text">Name</th><th scope="col" class="text">App</th><th scope="col" class="text">Allowed origins</th>
          <th scope="col" class="text">State</th><th scope="col" class="text">Public key</th><th scope="col" class="text">Created</th></tr></thead>
        <tbody>{r.data.sources.map((s) => (
          <tr key={s.id} data-source={s.id}>
            <th scope="row" class="text"><a href={href('/sources/' + encodeURIComponent(s.id))}>{s.name || s.id}</a></th>
            <td class="text">{s.appId}</td><td class="text">{s.allowedOrigins.join(' ')}</td>
            <td class="text">{s.enabled ? 'enabled' : 'disabled'}</td><td class="text"><code>{s.publicKey}</code></td>
            <td class="text">{formatTimestamp(s.createdAt)}</td>
          </tr>
        ))}</tbody>
      </table>}
    </main>
  );
}
