// Ads: verified lifecycle events uploaded to Google Ads as offline click conversions
// (docs/ADS_UPLOAD.md). Three views: #/ads (the connection, the account, the conversion actions and
// the verification checklist), #/ads/mappings and #/ads/queue. Owners and admins act; members read.
import { api, unwrap } from '../api/client';
import { ErrorBox, Loading } from '../components/Status';
import type { Filters } from '../filters';
import type { Route } from '../router';
import { workspace } from '../session';
import { Checklist } from './ads/Checklist';
import { Connection } from './ads/Connection';
import { Mappings, type Source } from './ads/Mappings';
import { Queue } from './ads/Queue';
import { useMayAct, usePolled } from './ads/shared';
import './ads/ads.css';

const views = [
  { path: '/ads', label: 'Connection and checklist' },
  { path: '/ads/mappings', label: 'Mappings' },
  { path: '/ads/queue', label: 'Upload queue' },
];

export function Ads({ route }: { route: Route; filters: Filters }) {
  const view = views.find((v) => v.path === route.path)?.path ?? '/ads';
  const { mayAct, role } = useMayAct();
  // A change reloads in place (the last answers stay on screen, and so do the notes saying what changed).
  const key = workspace.value;
  const conn = usePolled(key, async () => unwrap(await api.GET('/api/admin/ads/connection')));
  const connected = conn.data?.state === 'connected';
  const actions = usePolled(key + ':' + (conn.data ? connected : 'unknown'), async () => connected ? unwrap(await api.GET('/api/admin/ads/conversion-actions')).actions : []);
  const mappings = usePolled(key, async () => unwrap(await api.GET('/api/admin/ads/mappings')).mappings);
  const sources = usePolled(workspace.value, async () => unwrap(await api.GET('/api/admin/sources')).sources
    .map((s): Source => ({ id: s.id, name: s.name, appId: s.appId, enabled: s.enabled })));
  const reload = () => { conn.reload(); actions.reload(); mappings.reload(); };
  // Who connected, by name: a member (user:<id>) or a key (key:<id>).
  const members = usePolled(workspace.value, async () => unwrap(await api.GET('/api/admin/members')).members);
  const actorName = (actor: string) => {
    const m = actor.startsWith('user:') ? members.data?.find((x) => x.userId === actor.slice(5)) : undefined;
    return m ? `${m.name || m.email} (${m.email})` : actor.startsWith('key:') ? `the API key ${actor.slice(4)}` : actor;
  };
  const sourceName = (id: string) => sources.data?.find((s) => s.id === id)?.name ?? id;
  const error = conn.error || mappings.error || sources.error;

  return (
    <main id="main" aria-labelledby="title" tabIndex={-1}>
      <h1 id="title">Ads</h1>
      <p>Verified lifecycle events (install, trial, qualified, paid) of visitors who came from a Google ad are uploaded to Google Ads as offline
        click conversions. Connect, select the conversion account, map a milestone to a conversion action, then follow the checklist.</p>
      <nav aria-label="Ads views" class="ads-sections">
        {views.map((v) => <a key={v.path} href={`#${v.path}`} aria-current={v.path === view ? 'page' : undefined}>{v.label}</a>)}
      </nav>
      {!mayAct && role && <p class="note" data-testid="ads-read-only">You can read this screen; as a {role} you cannot change it. Owners and admins
        connect, select the account, create mappings, retry rows and disconnect.</p>}
      {error && <ErrorBox error={error} />}
      {(!conn.data || !mappings.data || !sources.data) && !error && <Loading what="the advertising setup" />}
      {actions.error && <ErrorBox error={actions.error} />}
      {conn.data && mappings.data && sources.data && <>
        {view === '/ads' && <>
          <Connection view={conn.data} actions={actions.data} mayAct={mayAct} onChange={reload} actorName={actorName} />
          <Checklist sourceName={sourceName} />
        </>}
        {view === '/ads/mappings' && <Mappings mappings={mappings.data} sources={sources.data} actions={actions.data} view={conn.data}
          mayAct={mayAct} onChange={reload} />}
        {view === '/ads/queue' && <Queue route={route} mappings={mappings.data} mayAct={mayAct} />}
      </>}
    </main>
  );
}
