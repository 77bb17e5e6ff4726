// Mappings: which verified event of which tracking source uploads to which conversion action.
// A new mapping starts with Validation only on; turning it off sends only new events live
// (validated rows are not replayed), and creating one uploads no past event (spec).
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import { Loading } from '../../components/Status';
import { formatMoney, formatTimestamp } from '../../format';
import { MappingForm } from './MappingForm';
import { milestoneLabel, type Schemas } from './shared';

type Mapping = Schemas['AdMapping'];
export type Source = { id: string; name: string; appId: string; enabled: boolean };

export function Mappings({ mappings, sources, actions, view, mayAct, onChange }: {
  mappings: Mapping[]; sources: Source[]; actions: Schemas['AdConversionAction'][] | undefined; view: Schemas['AdsConnectionView'];
  mayAct: boolean; onChange: () => void;
}) {
  const [note, setNote] = useState<{ ok: boolean; text: string; id?: string } | null>(null);
  const sourceName = (id: string) => sources.find((s) => s.id === id)?.name ?? id;
  const setValidationOnly = async (m: Mapping, on: boolean) => {
    setNote(null);
    try {
      unwrap(await api.PATCH('/api/admin/ads/mappings/{id}', { params: { path: { id: m.mappingId } }, body: { validationOnly: on } }));
      setNote({ ok: true, id: m.mappingId, text: on
        ? `Validation only is on for ${milestoneLabel(m.milestone)} → ${m.conversionActionId}: new events are checked by Google and not applied.`
        : `Validation only is off for ${milestoneLabel(m.milestone)} → ${m.conversionActionId}: new events upload live. Rows already validated are not replayed.` });
      onChange();
    } catch (err) { setNote({ ok: false, id: m.mappingId, text: (err as Error).message }); }
  };
  return (
    <section class="ads-panel" aria-labelledby="ads-mappings">
      <h2 id="ads-mappings">Mappings</h2>
      <p class="note">Each mapping uploads one verified event (milestone) of one tracking source as a conversion of one action. A new mapping uploads
        no past event. <strong>Validation only</strong> (on by default) has Google check each upload without applying it; turning it off sends only
        events that arrive afterwards live: rows already validated are <strong>not replayed</strong>.</p>
      {note && <p role={note.ok ? 'status' : 'alert'} class={note.ok ? 'ok' : 'error'} data-testid="ads-mapping-note">{note.text}</p>}
      {mappings.length === 0
        ? <p class="empty">No mapping yet. {mayAct ? (view.ready ? 'Create one below.' : 'Connect and select the conversion account first.') : 'An owner or admin creates them.'}</p>
        : <table data-testid="ads-mappings-table">
            <caption>Mappings of this workspace</caption>
            <thead><tr><th scope="col">Tracking source</th><th scope="col" class="text">Milestone</th><th scope="col" class="text">Conversion action</th>
              <th scope="col" class="text">Value</th><th scope="col" class="text">State</th><th scope="col" class="text">Validation only</th><th scope="col" class="text">Created</th></tr></thead>
            <tbody>{mappings.map((m) => (
              <tr key={m.mappingId} data-mapping={m.mappingId}>
                <th scope="row">{sourceName(m.sourceId)}</th>
                <td class="text">{milestoneLabel(m.milestone)}</td>
                <td class="text">{m.conversionActionId} {m.conversionActionName}</td>
                <td class="text">{m.fixedValueCents !== undefined && m.fixedCurrency ? `fixed ${formatMoney(m.fixedValueCents, m.fixedCurrency)}` : 'the event\'s value'}</td>
                <td class="text">{m.enabled ? 'enabled' : `disabled${m.disabledReason ? `: ${m.disabledReason}` : ''}`}</td>
                <td class="text" data-testid="validation-only">{m.validationOnly ? 'on' : 'off'}
                  {mayAct && m.enabled && <>{' '}<button type="button" onClick={() => setValidationOnly(m, !m.validationOnly)}>
                    {m.validationOnly ? 'Turn off (upload live)' : 'Turn on'}<span class="sr"> Validation only of {milestoneLabel(m.milestone)} to {m.conversionActionId}</span></button></>}</td>
                <td class="text">{formatTimestamp(m.createdAt)}</td>
              </tr>
            ))}</tbody>
          </table>}
      {mayAct && view.ready && (actions
        ? <MappingForm sources={sources} actions={actions} discovery={view.accountDiscovery} onCreated={onChange} />
        : <Loading what="the conversion actions" />)}
    </section>
  );
}
