// What to paste: the script tag with the public key (docs/TRACKING.md, section 2), the server's
// environment, and the server side of the handoff for the stacks app publishers use most
// (src/snippets/, run by browsertest/snippets.test.mjs where the machine has the runtime).
import { useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { workspace } from '../../session';
import nodeSnippet from '../../snippets/node-remix.server.mjs?raw';
import railsSnippet from '../../snippets/rails.rb?raw';
import laravelSnippet from '../../snippets/laravel.php?raw';
import { Copy } from './Copy';

type Source = components['schemas']['Source'];

export const stacks = [
  { id: 'node', label: 'Node / Remix', file: 'app/revtrack.server.mjs', text: nodeSnippet },
  { id: 'rails', label: 'Ruby on Rails', file: 'app/lib/revtrack.rb', text: railsSnippet },
  { id: 'laravel', label: 'PHP / Laravel', file: 'app/Support/Revtrack.php', text: laravelSnippet },
] as const;

// The edge that serves tracker.js and takes events is this same address in a single deployment.
const base = () => globalThis.location?.origin ?? '';

export function scriptTag(publicKey: string): string {
  return `<script async src="${base()}/v1/tracker.js" data-key="${publicKey}"></script>`;
}

export function serverEnv(publicKey: string, team: string): string {
  return [`REVTRACK_URL=${base()}`, `REVTRACK_TEAM=${team}`, `REVTRACK_TRACKER_PK=${publicKey}`,
    'REVTRACK_TRACKER_SK=<the private key, shown once at creation or rotation>'].join('\n');
}

export function Snippets({ source }: { source: Source }) {
  const [stack, setStack] = useState<string>('node');
  const s = stacks.find((x) => x.id === stack) || stacks[0];
  const tag = scriptTag(source.publicKey);
  const env = serverEnv(source.publicKey, workspace.value);
  return (
    <section aria-labelledby="snippets-title" data-testid="snippets">
      <h2 id="snippets-title">Install</h2>
      <h3>1. The script, on your app's own pages</h3>
      <p class="note">On the pages of {source.allowedOrigins.join(', ')} (the allowed origins): your app's frontend or install and marketing
        pages, never a merchant's storefront theme. Page views are sent on load and on every URL change; send no manual page view.</p>
      <pre data-testid="script-tag"><code>{tag}</code></pre>
      <Copy text={tag} label="script tag" />
      <h3>2. Your server's environment</h3>
      <p class="note">The private key stays on your server: never in a page, a browser bundle or a URL.</p>
      <pre data-testid="server-env"><code>{env}</code></pre>
      <Copy text={env} label="environment" />
      <h3>3. The handoff, on your server</h3>
      <p class="note">Before sending a visitor into the platform's installation, keep <code>window.tracker.getAcquisitionId()</code> in your
        signed first-party session; after the platform's authentication succeeds (callback HMAC and your own OAuth state checked), send the
        verified event with it. The acquisition ID never replaces the OAuth state or nonce.</p>
      <label>Your server's stack <select value={stack} onChange={(e) => setStack(e.currentTarget.value)}>
        {stacks.map((x) => <option key={x.id} value={x.id}>{x.label}</option>)}</select></label>
      <p class="note">Save as <code>{s.file}</code>.</p>
      <pre class="snippet" data-testid="server-snippet" tabIndex={0} aria-label={`${s.label} server snippet`}><code>{s.text}</code></pre>
      <Copy text={s.text} label={`${s.label} snippet`} />
    </section>
  );
}
