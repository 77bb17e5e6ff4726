// One tracking source: its keys and origins, the actions of owners and admins, the snippets to
// install it, and its status panel.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { ErrorBox, Loading } from '../../components/Status';
import { formatTimestamp } from '../../format';
import { href } from '../../router';
import { workspace } from '../../session';
import { useLoad } from '../../useLoad';
import { canManage } from './access';
import { Actions } from './Actions';
import { KeyOnce } from './KeyOnce';
import { Snippets } from './Snippets';
import { StatusPanel } from './StatusPanel';

type Source = components['schemas']['Source'];

export function SourceDetail({ id }: { id: string }) {
  const r = useLoad(`${workspace.value} ${id}`, async () => unwrap(await api.GET('/api/admin/sources/{id}', { params: { path: { id } } })));
  // An action's answer is the source as it now is: shown at once, without reloading the page.
  const [changed, setChanged] = useState<Source | null>(null);
  const s = changed?.id === id ? changed : r.data?.source;
  return (
    <main id="main" aria-labelledby="title">
      <p><a href={href('/sources')}>All tracking sources</a></p>
      <h1 id="title">Tracking source{s ? `: ${s.name || s.id}` : ''}</h1>
      {r.error && <ErrorBox error={r.error} />}
      {!r.data && r.loading && <Loading what="the tracking source" />}
      <KeyOnce sourceId={id} />
      {s && <>
        <dl class="facts" data-testid="source-facts">
          <dt>App</dt><dd>{s.appId}</dd>
          <dt>State</dt><dd data-testid="source-state">{s.enabled ? 'enabled: events are accepted' : 'disabled: every event is refused (stored events stay until the 180-day retention ends)'}</dd>
          <dt>Allowed origins</dt><dd data-testid="source-origins">{s.allowedOrigins.join(' ')}</dd>
          <dt>Public key</dt><dd><code data-testid="public-key">{s.publicKey}</code></dd>
          <dt>Private key</dt><dd>shown once, at creation and at each rotation; stored only as a hash</dd>
          <dt>Created</dt><dd>{formatTimestamp(s.createdAt)}</dd>
          <dt>Changed</dt><dd>{formatTimestamp(s.updatedAt)}</dd>
        </dl>
        {canManage() ? <Actions source={s} onChanged={setChanged} />
          : <p class="note" data-testid="read-only">Owners and admins rotate keys and disable or enable a source; you can read it.</p>}
        <StatusPanel source={s} />
        <Snippets source={s} />
      </>}
    </main>
  );
}
