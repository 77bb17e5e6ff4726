// The upload queue: one row per mapped verified event, newest first, refreshed every few seconds
// while open: state, click evidence, event time, the diagnosis with the platform's reason codes,
// the request ID; filters in the fragment (#/ads/queue?status=rejected&mapping=…); Retry on a
// rejected row that keeps its click evidence (the API refuses the others and says why).
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import { ErrorBox, Loading } from '../../components/Status';
import { formatMoney, formatTimestamp } from '../../format';
import { navigate, type Route } from '../../router';
import { workspace } from '../../session';
import { milestoneLabel, usePolled, type Schemas } from './shared';

type Row = Schemas['UploadRow'];
type Status = Schemas['UploadRowStatus'];
const statuses: Status[] = ['queued', 'unattributed', 'validated', 'accepted', 'retrying', 'rejected'];
export const QUEUE_POLL_MS = 3000;

const diagnoses: Record<string, string> = {
  invalid_click_id: 'Invalid click ID', no_consent: 'No consent', duplicate_transaction: 'Duplicate transaction', wrong_account: 'Wrong account',
  unattributed: 'Unattributed (no click ID)', event_window: 'Outside the upload window', outcome_unknown: 'Outcome unknown', other: 'Other',
};

// sentSince: the row was written after a Retry answered at `at` (ms) by a send, not by the Retry.
// Compared to the second: the stored time has no fraction, while the Retry's answer may.
export const sentSince = (row: Row, at: number) => {
  const t = Math.floor(Date.parse(row.updatedAt) / 1000), a = Math.floor(at / 1000);
  return t > a || (t === a && row.attempts > 0);
};

export function Queue({ route, mappings, mayAct }: { route: Route; mappings: Schemas['AdMapping'][]; mayAct: boolean }) {
  const p = route.params;
  const f = { status: (p.get('status') || undefined) as Status | undefined, mappingId: p.get('mapping') || undefined,
    from: p.get('from') || undefined, to: p.get('to') || undefined, cursor: p.get('cursor') || undefined };
  const set = (k: string, v: string) => {
    const next: Record<string, string | undefined> = { status: f.status, mapping: f.mappingId, from: f.from, to: f.to };
    next[k] = v || undefined;
    navigate('/ads/queue', next); // a new filter starts at the newest rows
  };
  const r = usePolled(workspace.value + JSON.stringify(f), async () =>
    unwrap(await api.GET('/api/admin/ads/queue', { params: { query: { ...f, limit: 50 } } })), QUEUE_POLL_MS);
  const [notes, setNotes] = useState<Record<string, { ok: boolean; text: string; at: number }>>({});
  const retry = async (row: Row) => {
    try {
      const { row: again } = unwrap(await api.POST('/api/admin/ads/queue/{rowId}/retry', { params: { path: { rowId: row.rowId } } }));
      setNotes((n) => ({ ...n, [row.rowId]: { ok: true, text: `Queued again (${again.status}); it is sent at the next dispatch.`, at: Date.parse(again.updatedAt) } }));
      r.reload();
    } catch (err) { setNotes((n) => ({ ...n, [row.rowId]: { ok: false, text: (err as Error).message, at: Date.now() } })); }
  };
  const label = (id: string) => {
    const m = mappings.find((x) => x.mappingId === id);
    return m ? `${milestoneLabel(m.milestone)} → ${m.conversionActionId}` : id;
  };

  return (
    <section aria-labelledby="ads-queue">
      <h2 id="ads-queue">Upload queue</h2>
      <p class="note">One row per verified event a mapping matched, newest first; this list refreshes every {QUEUE_POLL_MS / 1000} s while open.
        <strong> validated</strong>: Google checked it, nothing applied (Validation only). <strong>accepted</strong>: uploaded live; Google's own diagnostics
        follow after at least 30 minutes. <strong>unattributed</strong>: no gclid, gbraid or wbraid was captured, nothing uploaded.
        <strong> rejected</strong>: see the diagnosis; Retry sends a rejected row again when it keeps its click evidence.</p>
      <form class="filters" aria-label="Queue filters" onSubmit={(e) => e.preventDefault()}>
        <label>State <select value={f.status ?? ''} onChange={(e) => set('status', e.currentTarget.value)}>
          <option value="">any</option>{statuses.map((s) => <option key={s} value={s}>{s}</option>)}</select></label>
        <label>Mapping <select value={f.mappingId ?? ''} onChange={(e) => set('mapping', e.currentTarget.value)}>
          <option value="">any</option>{mappings.map((m) => <option key={m.mappingId} value={m.mappingId}>{label(m.mappingId)}</option>)}</select></label>
        <label>Filed from <input type="date" value={f.from ?? ''} onChange={(e) => set('from', e.currentTarget.value)} /></label>
        <label>Filed before <input type="date" value={f.to ?? ''} onChange={(e) => set('to', e.currentTarget.value)} /></label>
      </form>
      {r.error && <ErrorBox error={r.error} />}
      {!r.data && r.loading && <Loading what="the upload queue" />}
      {r.data && (r.data.rows.length === 0
        ? <p class="empty" data-testid="ads-queue-empty">{f.status || f.mappingId || f.from || f.to
            ? 'No row matches these filters.'
            : 'No row yet. A row appears when a verified event of a mapped milestone arrives after the mapping was created: follow the checklist on the Connection screen.'}</p>
        : <table data-testid="ads-queue-table">
            <caption>Upload-queue rows{f.cursor ? ' (older page)' : ''}</caption>
            <thead><tr><th scope="col">Event time</th><th scope="col" class="text">Mapping</th><th scope="col" class="text">State</th>
              <th scope="col" class="text">Click evidence</th><th scope="col" class="text">Value</th><th scope="col" class="text">Diagnosis</th>
              <th scope="col" class="text">Request ID</th>{mayAct && <th scope="col" class="text">Action</th>}</tr></thead>
            <tbody>{r.data.rows.map((row) => (
              <tr key={row.rowId} data-row={row.rowId} data-status={row.status} data-click={row.clickId}>
                <th scope="row">{formatTimestamp(row.eventTime)}</th>
                <td class="text">{label(row.mappingId)}</td>
                <td class="text" data-testid="row-status">{row.status}{row.validationOnly ? ' (validation only)' : ''}
                  {row.diagnosticsStatus ? <><br />diagnostics {row.diagnosticsStatus}</> : null}</td>
                <td class="text">{row.clickIdType ? <>{row.clickIdType} <code>{row.clickId}</code></> : 'none'}</td>
                <td class="text">{row.valueCents !== undefined && row.currency ? formatMoney(row.valueCents, row.currency) : '—'}</td>
                <td class="text ads-diagnosis">
                  {row.diagnosis && <><strong>{diagnoses[row.diagnosis.code] ?? row.diagnosis.code}</strong>: {row.diagnosis.hint}<br /></>}
                  {row.reasonCodes.length > 0 && <span class="ads-codes">Reason codes: {row.reasonCodes.map((c) => <code key={c}>{c}</code>)}<br /></span>}
                  {row.message}
                  {row.nextAttemptAt && <><br />{row.status === 'accepted' ? 'Google\'s diagnostics read from' : 'Sent again at'} {formatTimestamp(row.nextAttemptAt)}</>}
                </td>
                <td class="text">{row.requestId ? <code>{row.requestId}</code> : '—'}</td>
                {mayAct && <td class="text">
                  {row.status === 'rejected' && row.clickIdType !== '' &&
                    <button type="button" onClick={() => retry(row)}>Retry<span class="sr"> the row of {formatTimestamp(row.eventTime)}</span></button>}
                  {/* A Retry's "queued again" stands until the row is sent again (written later, or in the
                      same second, as times are to the second, with an attempt counted since the Retry). */}
                  {notes[row.rowId] && !(notes[row.rowId].ok && sentSince(row, notes[row.rowId].at)) && <span role={notes[row.rowId].ok ? 'status' : 'alert'} class={`ads-field-error ${notes[row.rowId].ok ? 'ok' : 'error'}`}>{notes[row.rowId].text}</span>}
                </td>}
              </tr>
            ))}</tbody>
          </table>)}
      <p class="pager">
        {f.cursor && <button type="button" onClick={() => set('cursor', '')}>Newest rows</button>}
        {r.data?.nextCursor && <button type="button" onClick={() => navigate('/ads/queue', { status: f.status, mapping: f.mappingId, from: f.from, to: f.to, cursor: r.data!.nextCursor })}>Older rows</button>}
      </p>
    </section>
  );
}
