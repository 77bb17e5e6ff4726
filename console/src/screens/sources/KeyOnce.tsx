// The private key right after creation or rotation: shown this once (the server keeps only a hash).
import { useEffect } from 'preact/hooks';
import { Copy } from './Copy';
import { freshKey } from './access';

export function KeyOnce({ sourceId }: { sourceId: string }) {
  const k = freshKey.value;
  // Leaving the page (or another source) forgets it: it is never shown twice.
  useEffect(() => () => { if (freshKey.peek()?.sourceId === sourceId) freshKey.value = null; }, [sourceId]);
  if (!k || k.sourceId !== sourceId) return null;
  return (
    <section class="warning" aria-labelledby="key-once" data-testid="private-key-once">
      <h2 id="key-once">Private key: you will not see this again</h2>
      <p>{k.why} Put it in your server's environment as <code>REVTRACK_TRACKER_SK</code> now; revtrack stores only a hash of it.
        It stays on your server: never in a page, a browser bundle or a URL.</p>
      <p><input readOnly size={60} aria-label="Private key" value={k.privateKey} data-testid="private-key" />{' '}
        <Copy text={k.privateKey} label="private key" /></p>
      <button type="button" onClick={() => { freshKey.value = null; }}>I have stored it; hide the key</button>
    </section>
  );
}
