// Connect an AI assistant: the MCP URL, ready-to-paste client configurations with a bearer header
// (the key just created, else a placeholder), and a connection test that calls the MCP server the
// way a client does (docs/MCP.md).
import { useState } from 'preact/hooks';
import { workspace } from '../../session';
import { CopyButton } from './common';
import { clientConfigs, KEY_PLACEHOLDER, type McpResult, testMcp } from './mcp';
import { justCreatedKey } from './state';

export function Assistant() {
  const url = `${location.origin}/api/mcp`;
  const created = justCreatedKey.value?.workspace === workspace.value ? justCreatedKey.value : null;
  const configs = clientConfigs(url, created?.value || KEY_PLACEHOLDER);
  return (
    <section aria-labelledby="assistant-title">
      <h2 id="assistant-title">Connect an AI assistant</h2>
      <p class="note">revtrack's MCP server answers the same questions as the reports, read-only, over the streamable-HTTP transport with a
        bearer header (no OAuth sign-in: the client must be able to send a header). Any key of this workspace works; a read-scoped one is enough.</p>
      <p><label>MCP server URL <input readOnly value={url} size={50} data-testid="mcp-url" /></label> <CopyButton text={url} what="the MCP server URL" /></p>
      <p class="note" data-testid="config-key">{created
        ? <>The configurations below carry the key “{created.name}” you just created. A file holding a key is a secret: keep it out of shared folders and repositories.</>
        : <>Replace <code>{KEY_PLACEHOLDER}</code> with a key (<a href="#/settings/keys">create one</a>; its value is shown once). Prefer the client's secret prompt or an environment variable.</>}</p>
      <TestConnection url={url} />
      {configs.map((c) => (
        <section key={c.id} aria-labelledby={`cfg-${c.id}`} class="config">
          <h3 id={`cfg-${c.id}`}>{c.title}</h3>
          <p class="kind">In {c.where}:</p>
          <pre tabIndex={0} aria-label={`${c.title} configuration`} data-testid={`config-${c.id}`}><code>{c.text}</code></pre>
          <CopyButton text={c.text} what={`the ${c.title} configuration`} />
        </section>
      ))}
    </section>
  );
}

function TestConnection({ url }: { url: string }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<McpResult | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setResult(null);
    setResult(await testMcp(url, key));
    setBusy(false);
  };
  return (
    <form class="filters" onSubmit={submit} aria-label="Test the MCP connection">
      <label>Key to test with (used for this test only, not stored)
        <input type="password" autoComplete="off" value={key} size={40} onInput={(e) => setKey(e.currentTarget.value)}
          aria-describedby={result && !result.ok ? 'mcp-test-error' : undefined} /></label>
      <button type="submit" disabled={busy}>{busy ? 'Testing…' : 'Test connection'}</button>
      {busy && <span role="status" class="loading">Calling initialize, then tools/list…</span>}
      {result?.ok && <p role="status" class="ok" data-testid="mcp-test-result">Connected to {result.name} {result.version} (protocol {result.protocolVersion}):
        {' '}{result.tools.length} tools ({result.tools.join(', ')}).</p>}
      {result && !result.ok && <p id="mcp-test-error" role="alert" class="error" data-testid="mcp-test-result">{result.error}</p>}
    </form>
  );
}
