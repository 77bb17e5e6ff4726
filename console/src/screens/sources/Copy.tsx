// A Copy button for a value shown on screen (a key, a snippet); says whether the copy worked.
import { useState } from 'preact/hooks';

export function Copy({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState('');
  const copy = async () => {
    try { await navigator.clipboard.writeText(text); setState('Copied.'); } catch { setState('Copy failed: select the text and copy it.'); }
  };
  return (
    <span>
      <button type="button" onClick={copy}>Copy <span class="sr">{label}</span></button>{' '}
      <span role="status">{state}</span>
    </span>
  );
}
