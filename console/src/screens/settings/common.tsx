// Pieces every Settings panel shares: who may act, a copy button, a field's refusal, and the
// confirmation a destructive action asks for first.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { session, workspace } from '../../session';

export type Refusal = Error & { code?: string; status?: number };

// Owners and admins act; members read (the server refuses them anyway: docs/SECURITY.md "Roles").
export function useRole() {
  const role = session.value?.workspaces.find((w) => w.slug === workspace.value)?.role;
  return { role, mayAct: role === 'owner' || role === 'admin', owner: role === 'owner' };
}

// CopyButton copies text and says so; where the browser refuses the clipboard, it says to copy by hand.
export function CopyButton({ text, what }: { text: string; what: string }) {
  const [said, setSaid] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setSaid('Copied.');
    } catch {
      setSaid('The browser refused the clipboard: select the text and copy it.');
    }
  };
  return (
    <span class="copy">
      <button type="button" onClick={copy}>Copy <span class="sr">{what}</span></button>
      <span role="status" class="ok">{said}</span>
    </span>
  );
}

// FieldError is the API's refusal next to the field it concerns; the field names it in
// aria-describedby, so a screen reader reads it with the field.
export function FieldError({ id, text }: { id: string; text: string | undefined }) {
  if (!text) return null;
  return <span id={id} class="error field-error" role="alert">{text}</span>;
}

// Confirm asks before a destructive action: it says what will happen and acts only on its own
// button; Escape cancels.
export function Confirm({ title, children, action, onConfirm, onCancel, busy }: {
  title: string; children: ComponentChildren; action: string; onConfirm: () => void; onCancel: () => void; busy?: boolean;
}) {
  const ref = useRef<HTMLDivElement>(null);
  // Focus moves in when it opens and back to what opened it when it closes (if still there).
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    ref.current?.focus();
    return () => { if (opener?.isConnected) opener.focus(); };
  }, []);
  return (
    <div class="confirm" role="alertdialog" aria-modal="false" aria-labelledby="confirm-title" tabIndex={-1} ref={ref}
      onKeyDown={(e) => { if (e.key === 'Escape') onCancel(); }}>
      <h2 id="confirm-title">{title}</h2>
      {children}
      <p><button type="button" class="danger" disabled={busy} onClick={onConfirm}>{action}</button>{' '}
        <button type="button" onClick={onCancel}>Cancel</button></p>
    </div>
  );
}

// Note is the outcome of the last action: a status for success, an alert for a refusal.
export function Note({ note }: { note: { ok: boolean; text: string } | null }) {
  if (!note) return null;
  return <p role={note.ok ? 'status' : 'alert'} class={note.ok ? 'ok' : 'error'}>{note.text}</p>;
}
