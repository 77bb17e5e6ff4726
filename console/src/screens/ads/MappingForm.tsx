// Create a mapping: source, milestone, numeric conversion action, optional fixed value with its
// currency, the consent and processing-policy confirmations, Validation only (on by default). The
// API's refusal is shown under the field it names.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import { minorDigits } from '../../format';
import type { Source } from './Mappings';
import { describedBy, FieldError, fieldOf, milestones, type Milestone, type Refusal, type Schemas } from './shared';

const fieldRules: [RegExp, string][] = [
  [/consent|processing policy/i, 'consent'],
  [/fixed value|currency/i, 'value'],
  [/conversion action name/i, 'name'],
  [/conversion action|action id/i, 'action'],
  [/milestone/i, 'milestone'],
  [/source/i, 'source'],
];

// minorUnits turns a typed amount (12.50) into the currency's minor units; NaN when it is not a number.
function minorUnits(amount: string, currency: string): number {
  let digits = 2;
  try { digits = minorDigits(currency.toUpperCase()); } catch { /* the API names a wrong currency */ }
  const n = Number(amount.replace(',', '.'));
  return Number.isFinite(n) ? Math.round(n * 10 ** digits) : NaN;
}

export function MappingForm({ sources, actions, discovery, onCreated }: {
  sources: Source[]; actions: Schemas['AdConversionAction'][]; discovery: boolean; onCreated: () => void;
}) {
  const listed = actions.filter((a) => a.status !== 'REMOVED');
  const [sourceId, setSourceId] = useState(sources[0]?.id ?? '');
  const [milestone, setMilestone] = useState<Milestone>('install');
  const [actionId, setActionId] = useState(listed[0]?.id ?? '');
  const [actionName, setActionName] = useState('');
  const [amount, setAmount] = useState('');
  const [currency, setCurrency] = useState('');
  const [consent, setConsent] = useState(false);
  const [policy, setPolicy] = useState(false);
  const [validationOnly, setValidationOnly] = useState(true);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [done, setDone] = useState('');
  const typed = !discovery || listed.length === 0;
  // The lists may arrive after the form: until something is chosen, the first entry is.
  const source = sources.some((x) => x.id === sourceId) ? sourceId : sources[0]?.id ?? '';
  const action = typed || listed.some((a) => a.id === actionId) ? actionId : listed[0]?.id ?? '';

  const submit = async (e: Event) => {
    e.preventDefault();
    setRefusal(null);
    setDone('');
    const value = amount.trim() || currency.trim()
      ? { fixedValueCents: minorUnits(amount.trim(), currency.trim()), fixedCurrency: currency.trim().toUpperCase() } : {};
    try {
      const { mapping } = unwrap(await api.POST('/api/admin/ads/mappings', { body: {
        sourceId: source, milestone, conversionActionId: action.trim(), ...(typed && actionName.trim() ? { conversionActionName: actionName.trim() } : {}),
        ...value,
        // Both confirmations make the API's one consentConfirmed; without them the API refuses, and
        // its message shows under the checkboxes.
        consentConfirmed: (consent && policy) as true, validationOnly,
      } }));
      setDone(`Created: ${mapping.milestone} → ${mapping.conversionActionId}, Validation only ${mapping.validationOnly ? 'on' : 'off'}. Events from now on are uploaded; past events are not.`);
      setAmount(''); setCurrency(''); setConsent(false); setPolicy(false); setValidationOnly(true);
      onCreated();
    } catch (err) {
      const m = (err as Error).message;
      const field = fieldOf(m, fieldRules);
      // With the listed actions there is no name field: the action's select shows it.
      setRefusal({ field: field === 'name' && !typed ? 'action' : field, message: m });
    }
  };
  const err = (field: string) => ({ 'aria-invalid': refusal?.field === field || undefined, 'aria-describedby': describedBy(`ads-map-${field}-err`, refusal, field) });

  if (sources.length === 0) return <p class="empty">No tracking source in this workspace: create one on the Sources screen first.</p>;
  return (
    <form class="ads-form" onSubmit={submit} aria-labelledby="ads-new-mapping" data-testid="ads-mapping-form">
      <h3 id="ads-new-mapping">New mapping</h3>
      <label>Tracking source
        <select value={source} onChange={(e) => setSourceId(e.currentTarget.value)} {...err('source')}>
          {sources.map((s) => <option key={s.id} value={s.id}>{s.name} ({s.appId}{s.enabled ? '' : ', disabled'})</option>)}
        </select><FieldError id="ads-map-source-err" refusal={refusal} field="source" /></label>
      <label>Milestone (verified event)
        <select value={milestone} onChange={(e) => setMilestone(e.currentTarget.value as Milestone)} {...err('milestone')}>
          {milestones.map((m) => <option key={m.value} value={m.value}>{m.label}</option>)}
        </select><FieldError id="ads-map-milestone-err" refusal={refusal} field="milestone" /></label>
      {typed
        ? <>
            <label>Conversion action ID (numeric)
              <input value={actionId} onInput={(e) => setActionId(e.currentTarget.value)} inputMode="numeric" autoComplete="off" {...err('action')} />
              <FieldError id="ads-map-action-err" refusal={refusal} field="action" /></label>
            <label>Conversion action name
              <input value={actionName} onInput={(e) => setActionName(e.currentTarget.value)} autoComplete="off" {...err('name')} />
              <FieldError id="ads-map-name-err" refusal={refusal} field="name" /></label>
          </>
        : <label>Conversion action
            <select value={action} onChange={(e) => setActionId(e.currentTarget.value)} {...err('action')}>
              {listed.map((a) => <option key={a.id} value={a.id}>{a.id}: {a.name}</option>)}
            </select><FieldError id="ads-map-action-err" refusal={refusal} field="action" /></label>}
      <label>Fixed value (optional)
        <input value={amount} onInput={(e) => setAmount(e.currentTarget.value)} inputMode="decimal" autoComplete="off" placeholder="e.g. 25.00" {...err('value')} />
        <FieldError id="ads-map-value-err" refusal={refusal} field="value" /></label>
      <label>Currency of the fixed value
        <input value={currency} onInput={(e) => setCurrency(e.currentTarget.value)} maxLength={3} size={4} autoComplete="off" placeholder="USD" {...err('value')} /></label>
      <p class="note">Without a fixed value, the event's own amount and currency are sent (paid events carry them); otherwise no value.</p>
      <label class="check"><input type="checkbox" checked={consent} onChange={(e) => setConsent(e.currentTarget.checked)} {...err('consent')} />
        I confirm the users whose events are uploaded gave consent to sharing them with Google for advertising.</label>
      <label class="check"><input type="checkbox" checked={policy} onChange={(e) => setPolicy(e.currentTarget.checked)} {...err('consent')} />
        I confirm the uploads follow Google's customer data and processing policies, which the account has accepted.</label>
      <FieldError id="ads-map-consent-err" refusal={refusal} field="consent" />
      <label class="check"><input type="checkbox" checked={validationOnly} onChange={(e) => setValidationOnly(e.currentTarget.checked)} />
        Validation only: Google checks each upload and applies nothing (turn it off once a row is validated).</label>
      <div class="actions"><button type="submit">Create mapping</button></div>
      <FieldError id="ads-map-form-err" refusal={refusal} field="form" />
      {done && <p class="ok" role="status" data-testid="ads-mapping-created">{done}</p>}
    </form>
  );
}
