// The spec's recommended verification order as a live checklist, per mapping: each step ticks
// itself from real data (GET /api/admin/ads/verification, read again every few seconds).
import { api, unwrap } from '../../api/client';
import { ErrorBox, Loading } from '../../components/Status';
import { formatTimestamp } from '../../format';
import { workspace } from '../../session';
import { milestoneLabel, usePolled, type Schemas } from './shared';

export const CHECKLIST_POLL_MS = 5000;
type Step = Schemas['AdsVerificationStep'];

const stepLabel = (s: Step['step'], milestone: string): string => ({
  page_view: 'Confirm a page view arrived from the mapping\'s tracking source',
  verified_event: `Send a verified ${milestoneLabel(milestone).toLowerCase()} event`,
  queue_row: 'Confirm its upload-queue row holds click evidence (gclid, gbraid or wbraid)',
  validated: 'Confirm the row is validated',
  validation_only_off: 'Turn Validation only off',
  live_event: 'Send a new event: its row is accepted',
  platform_confirmed: 'Confirm in Google Ads after processing (at least 30 minutes)',
}[s]);

export function Checklist({ sourceName }: { sourceName: (id: string) => string }) {
  const r = usePolled(workspace.value, async () => unwrap(await api.GET('/api/admin/ads/verification')), CHECKLIST_POLL_MS);
  return (
    <section class="ads-panel" aria-labelledby="ads-checklist">
      <h2 id="ads-checklist">Verification checklist</h2>
      <p class="note">The recommended order, checked against the data every {CHECKLIST_POLL_MS / 1000} s: each step ticks itself when its evidence arrives.</p>
      {r.error && <ErrorBox error={r.error} />}
      {!r.data && r.loading && <Loading what="the verification" />}
      {r.data?.hint && <p class="empty" data-testid="ads-verification-hint">{r.data.hint}</p>}
      {r.data?.mappings.map((m) => (
        <div key={m.mappingId} data-testid="ads-checklist" data-mapping={m.mappingId} data-next={m.next}>
          <h3>{sourceName(m.sourceId)}: {milestoneLabel(m.milestone)} → {m.conversionActionId}
            {m.validationOnly ? ' (Validation only)' : ''}</h3>
          {m.blocker && <p class="warning" role="status">Nothing new uploads: {m.blocker}</p>}
          <ol class="ads-checklist">{m.steps.map((s) => (
            <li key={s.step} class={s.done ? 'done' : s.step === m.next ? 'next' : undefined} data-step={s.step} data-done={String(s.done)}>
              <span class="sr">{s.done ? 'Done: ' : 'Not yet: '}</span>{stepLabel(s.step, m.milestone)}
              {s.done && s.at ? ` (${formatTimestamp(s.at)})` : ''}
              <span class="hint">{s.hint}{s.reasonCodes?.length ? ` Reason codes: ${s.reasonCodes.join(', ')}.` : ''}</span>
            </li>
          ))}</ol>
          {m.next === '' && <p class="ok">Every step is done.</p>}
        </div>
      ))}
    </section>
  );
}
