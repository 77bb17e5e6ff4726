// Replace the allowed origins (the whole list, as the API takes it): the fix for "origin not allowed".
// The API validates them as at creation; its refusal is shown next to the field.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema';

type Source = components['schemas']['Source'];

export function OriginsForm({ source, onChanged }: { source: Source; onChanged: (s: Source) => void }) {
  const [origins, setOrigins] = useState(source.allowedOrigins.join('\n'));
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setNote(null);
    setBusy(true);
    try {
      const allowedOrigins = origins.split(/[\s,]+/).filter(Boolean);
      const now = unwrap(await api.PATCH('/api/admin/sources/{id}', { params: { path: { id: source.id } }, body: { allowedOrigins } })).source;
      setOrigins(now.allowedOrigins.join('\n'));
      setNote({ ok: true, text: `Allowed origins saved: ${now.allowedOrigins.join(', ')}. Pages of other origins are refused from now on.` });
      onChanged(now);
    } catch (err) { setNote({ ok: false, text: (err as Error).message }); } finally { setBusy(false); }
  };
  return (
    <form onSubmit={submit} aria-labelledby="origins-title" data-testid="origins-form">
      <h3 id="origins-title">Allowed origins</h3>
      <label>Allowed origins of this source (one per line)
        <textarea rows={3} required value={origins} onInput={(e) => setOrigins(e.currentTarget.value)}
          aria-describedby={`edit-origins-rule${note && !note.ok ? ' edit-origins-error' : ''}`} /></label>
      <span id="edit-origins-rule" class="note">The whole list: scheme, host and port exactly, no path.</span>
      {note && <span id={note.ok ? undefined : 'edit-origins-error'} role={note.ok ? 'status' : 'alert'} class={note.ok ? 'ok' : 'error'}>{note.text}</span>}
      <button type="submit" disabled={busy}>{busy ? 'Saving…' : 'Save allowed origins'}</button>
    </form>
  );
}
