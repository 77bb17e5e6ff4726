// The MCP side of the AI assistant panel: ready-to-paste client configurations, and a connection
// test that speaks to /api/mcp as a client does (streamable HTTP: initialize, the initialized
// notification, then tools/list in the session the server gave), with the key the person typed.
// The key goes in the Authorization header only, never in storage, a URL or a log; the session
// cookie is not sent (credentials: 'omit'), so the test proves the key, as a client would.

export const PROTOCOL_VERSION = '2025-11-25';
export const KEY_PLACEHOLDER = 'YOUR_API_KEY';

export type ClientConfig = { id: string; title: string; where: string; language: 'json' | 'shell'; text: string };

export function clientConfigs(url: string, key: string): ClientConfig[] {
  const bearer = `Bearer ${key}`;
  const json = (v: unknown) => JSON.stringify(v, null, 2);
  return [
    { id: 'claude-desktop', title: 'Claude Desktop', where: 'claude_desktop_config.json (through the mcp-remote bridge: its file starts local servers only)', language: 'json',
      text: json({ mcpServers: { revtrack: { command: 'npx', args: ['-y', 'mcp-remote', url, '--header', 'Authorization:${REVTRACK_AUTH}'], env: { REVTRACK_AUTH: bearer } } } }) },
    { id: 'cursor', title: 'Cursor', where: '~/.cursor/mcp.json or .cursor/mcp.json', language: 'json',
      text: json({ mcpServers: { revtrack: { url, headers: { Authorization: bearer } } } }) },
    { id: 'vscode', title: 'VS Code', where: '.vscode/mcp.json (VS Code asks for the key once and stores it)', language: 'json',
      text: json({ servers: { revtrack: { type: 'http', url, headers: { Authorization: 'Bearer ${input:revtrack-key}' } } },
        inputs: [{ type: 'promptString', id: 'revtrack-key', description: 'revtrack API key', password: true }] }) },
    { id: 'claude-code', title: 'Claude Code', where: 'a terminal', language: 'shell',
      text: `claude mcp add --transport http revtrack ${url} --header "Authorization: ${bearer}"` },
    { id: 'generic', title: 'Any streamable-HTTP client', where: 'the client\'s MCP server list', language: 'json',
      text: json({ mcpServers: { revtrack: { type: 'streamable-http', url, headers: { Authorization: bearer } } } }) },
  ];
}

export type McpResult = { ok: true; name: string; version: string; protocolVersion: string; tools: string[] } | { ok: false; error: string };

type RpcAnswer = { result?: Record<string, unknown>; error?: { code: number; message: string } };

// readAnswer takes the JSON-RPC answer from a plain JSON body or from the first event of a stream.
async function readAnswer(r: Response): Promise<RpcAnswer> {
  const text = await r.text();
  if ((r.headers.get('Content-Type') || '').includes('text/event-stream')) {
    const data = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim());
    return JSON.parse(data[0] || '{}');
  }
  return JSON.parse(text);
}

// refusal words an HTTP refusal of the endpoint: the API's own message when it sent one.
async function refusal(r: Response): Promise<string> {
  let msg = '';
  try { msg = (JSON.parse(await r.text()) as { message?: string }).message || ''; } catch { /* not JSON */ }
  const why = r.status === 401 ? 'the key is missing, wrong or revoked' : r.status === 403 ? 'the workspace lacks an active subscription' : `HTTP ${r.status}`;
  return `The server refused the key (${r.status}): ${msg || why}.`;
}

export async function testMcp(url: string, key: string, fetcher: typeof fetch = (...a) => globalThis.fetch(...a)): Promise<McpResult> {
  if (!key.trim()) return { ok: false, error: 'Paste a key to test with (revtrack_sk_… or a tracking source\'s tracker_sk_…).' };
  const headers: Record<string, string> = { Authorization: `Bearer ${key.trim()}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const post = (body: unknown) => fetcher(url, { method: 'POST', headers, body: JSON.stringify(body), credentials: 'omit', cache: 'no-store' });
  try {
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'revtrack-console', version: '1.0' } } });
    if (!init.ok) return { ok: false, error: await refusal(init) };
    const hello = await readAnswer(init);
    if (hello.error || !hello.result) return { ok: false, error: `initialize failed: ${hello.error?.message || 'no result'}` };
    const session = init.headers.get('Mcp-Session-Id');
    const info = (hello.result.serverInfo || {}) as { name?: string; version?: string };
    const protocolVersion = String(hello.result.protocolVersion || '');
    if (session) headers['Mcp-Session-Id'] = session;
    if (protocolVersion) headers['MCP-Protocol-Version'] = protocolVersion;
    const ready = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    if (!ready.ok && ready.status !== 202) return { ok: false, error: await refusal(ready) };
    const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    if (!list.ok) return { ok: false, error: await refusal(list) };
    const tools = await readAnswer(list);
    if (tools.error || !tools.result) return { ok: false, error: `tools/list failed: ${tools.error?.message || 'no result'}` };
    const names = ((tools.result.tools || []) as { name: string }[]).map((t) => t.name);
    return { ok: true, name: info.name || '?', version: info.version || '?', protocolVersion, tools: names };
  } catch (err) {
    return { ok: false, error: `Could not reach ${url}: ${(err as Error).message}` };
  }
}
