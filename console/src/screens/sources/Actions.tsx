// Rotate either key and disable or enable the source, each after a confirmation that spells out
// the consequence (docs/TRACKING.md, section 1: a rotated key stops working at once everywhere).
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { freshKey } from './access';
import { OriginsForm } from './OriginsForm';

type Source = components['schemas']['Source'];
type Action = 'rotate-public' | 'rotate-private' | 'disable' | 'enable';

const confirmations: Record<Action, { title: string; consequence: string; button: string }> = {
  'rotate-public': {
    title: 'Rotate the public key?',
    consequence: 'A new public key replaces this one at once: the old key is refused from now on, so the script tag (data-key) on every ' +
      'page that uses it must change, and your server\'s REVTRACK_TRACKER_PK too. Until they do, their page views and server events are lost.',
    button: 'Rotate public key',
  },
  'rotate-private': {
    title: 'Rotate the private key?',
    consequence: 'A new private key replaces this one at once: the old key is refused from now on, so REVTRACK_TRACKER_SK in your ' +
      'server\'s environment must change. The new key is shown once, right after.',
    button: 'Rotate private key',
  },
  disable: {
    title: 'Disable this source?',
    consequence: 'Every page view and server event of this source is refused from now on (tracking_source_unavailable) until it is ' +
      'enabled again; nothing sent meanwhile is kept. Events already stored stay until the 180-day retention ends.',
    button: 'Disable source',
  },
  enable: {
    title: 'Enable this source?',
    consequence: 'Its current keys are accepted again from the allowed origins.',
    button: 'Enable source',
  },
};

export function Actions({ source, onChanged }: { source: Source; onChanged: (s: Source) => void }) {
  const [asking, setAsking] = useState<Action | null>(null);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => { if (asking) confirmRef.current?.focus(); }, [asking]);
  const path = { params: { path: { id: source.id } } };
  const run = async (a: Action) => {
    setBusy(true);
    setNote(null);
    try {
      let now: Source;
      if (a === 'rotate-public') {
        now = unwrap(await api.POST('/api/admin/sources/{id}/rotate-public-key', path)).source;
        setNote({ ok: true, text: 'The public key was rotated: update data-key on every page and REVTRACK_TRACKER_PK on your server.' });
      } else if (a === 'rotate-private') {
        const r = unwrap(await api.POST('/api/admin/sources/{id}/rotate-private-key', path));
        now = r.source;
        freshKey.value = { sourceId: source.id, privateKey: r.privateKey, why: 'The private key was rotated; the previous one is refused from now on.' };
        setNote({ ok: true, text: 'The private key was rotated.' });
      } else {
        now = unwrap(await api.PATCH('/api/admin/sources/{id}', { ...path, body: { enabled: a === 'enable' } })).source;
        setNote({ ok: true, text: a === 'enable' ? 'The source is enabled.' : 'The source is disabled.' });
      }
      setAsking(null);
      onChanged(now);
    } catch (err) {
      setNote({ ok: false, text: (err as Error).message });
    } finally { setBusy(false); }
  };
  const c = asking && confirmations[asking];
  return (
    <section aria-labelledby="actions-title" data-testid="source-actions">
      <h2 id="actions-title">Keys, state and origins</h2>
      <div class="filters">
        <button type="button" onClick={() => setAsking('rotate-public')}>Rotate public key…</button>
        <button type="button" onClick={() => setAsking('rotate-private')}>Rotate private key…</button>
        <button type="button" onClick={() => setAsking(source.enabled ? 'disable' : 'enable')}>{source.enabled ? 'Disable source…' : 'Enable source…'}</button>
      </div>
      {c && asking && <div role="alertdialog" aria-labelledby="confirm-title" aria-describedby="confirm-text" class="warning" data-testid="confirm">
        <h3 id="confirm-title">{c.title}</h3>
        <p id="confirm-text">{c.consequence}</p>
        <button type="button" ref={confirmRef} disabled={busy} onClick={() => run(asking)}>{c.button}</button>{' '}
        <button type="button" onClick={() => setAsking(null)}>Cancel</button>
      </div>}
      {note && <p role={note.ok ? 'status' : 'alert'} class={note.ok ? 'ok' : 'error'} data-testid="action-note">{note.text}</p>}
      <OriginsForm key={source.id} source={source} onChanged={onChanged} />
    </section>
  );
}
