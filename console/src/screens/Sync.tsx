// Sync: the platform sync runs per app (status, counts, coverage, error), refreshed every few
// seconds while one runs; owners and admins can start one (the server refuses members too).
import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { ErrorBox, Loading } from '../components/Status';
import { formatCount, formatTimestamp } from '../format';
import type { components } from '../api/schema';
import { useLoad } from '../useLoad';
import { session, workspace } from '../session';

const POLL_MS = 3000;

export function Sync() {
  const [tick, setTick] = useState(0);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const r = useLoad(workspace.value + tick, async () => unwrap(await api.GET('/api/admin/sync-runs', { params: { query: { limit: 50 } } })));
  const running = r.data?.runs.some((x) => x.status === 'running');
  useEffect(() => {
    if (!running) return;
    const id = setTimeout(() => setTick((t) => t + 1), POLL_MS);
    return () => clearTimeout(id);
  }, [running, r.data]);
  const role = session.value?.workspaces.find((w) => w.slug === workspace.value)?.role;
  const mayStart = role === 'owner' || role === 'admin';
  const start = async () => {
    setNote(null);
    try {
      const res = unwrap(await api.POST('/api/admin/sync-runs', { body: {} }));
      setNote({ ok: true, text: `Started ${res.runs.length} run(s)${res.alreadyRunning.length ? `; already running: ${res.alreadyRunning.join(', ')}` : ''}.` });
      setTick((t) => t + 1);
    } catch (err) { setNote({ ok: false, text: (err as Error).message }); }
  };
  return (
    <main id="main" aria-labelledby="title">
      <h1 id="title">Sync</h1>
      <p>Data comes from the platform's Partner API: every hour, and when started here.{running ? ' A sync is running; this page refreshes by itself.' : ''}</p>
      {mayStart && <button type="button" onClick={start}>Start a sync of every app</button>}
      {note && <p role={note.ok ? 'status' : 'alert'} class={note.ok ? 'ok' : 'error'}>{note.text}</p>}
      {r.error && <ErrorBox error={r.error} />}
      {!r.data && r.loading && <Loading what="sync runs" />}
      {r.data && <table data-testid="sync-runs">
        <caption>Sync runs, newest first</caption>
        <thead><tr><th scope="col">App</th><th scope="col" class="text">Status</th><th scope="col" class="text">Trigger</th><th scope="col" class="text">Started</th><th scope="col" class="text">Finished</th>
          <th scope="col">Events loaded</th><th scope="col">Transactions loaded</th><th scope="col" class="text">Coverage</th><th scope="col" class="text">Progress or error</th></tr></thead>
        <tbody>{r.data.runs.map((x) => (
          <tr key={x.runId} data-status={x.status}><th scope="row">{x.appId}</th><td class="text">{x.status}</td><td class="text">{x.trigger}</td>
            <td class="text">{formatTimestamp(x.startedAt)}</td><td class="text">{formatTimestamp(x.finishedAt)}</td>
            <td>{formatCount(x.eventsCount)}</td><td>{formatCount(x.transactionsCount)}</td>
            <td class="text">{x.coverageFrom ? `${formatTimestamp(x.coverageFrom)} – ${formatTimestamp(x.coverageThrough)}` : '—'}{x.truncated ? ' (truncated)' : ''}</td>
            <td class="text">{x.status === 'running' && x.progress ? <Progress p={x.progress} /> : x.error}</td></tr>
        ))}</tbody>
      </table>}
    </main>
  );
}

type RunProgress = NonNullable<components['schemas']['SyncRun']['progress']>;

// A running sync's live progress, as the syncing process last published it.
function Progress({ p }: { p: RunProgress }) {
  const w = p.walk;
  const left = w.estimatedSecondsLeft;
  return (
    <span data-testid="sync-progress">
      {formatCount(p.eventsCount)} events and {formatCount(p.transactionsCount)} transactions loaded ({formatCount(p.pages)} pages);
      {' '}step {w.step} of {w.steps}: {w.stream.replace('_', ' ')} {w.direction}, reached {formatTimestamp(w.reachedAt)}
      {w.target ? ` of ${formatTimestamp(w.target)}` : ''}; {left === null ? 'time left unknown' : `about ${formatCount(Math.ceil(left))} s left`}
      {' '}(as of {formatTimestamp(p.updatedAt)})
    </span>
  );
}
