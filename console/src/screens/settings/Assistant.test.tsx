import { fireEvent, render, screen } from '@testing-library/preact';
import { describe, expect, it, vi } from 'vitest';
import { as } from './as';
import { Assistant } from './Assistant';
import { clientConfigs, testMcp } from './mcp';
import { justCreatedKey } from './state';

const json = (body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json', ...headers } });

// A stand-in MCP server: initialize gives a session; tools/list needs it and the bearer key.
function server(key: string) {
  const calls: { method: string; session: string | null; auth: string | null; credentials?: string }[] = [];
  const f = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
    const h = new Headers(init?.headers);
    const body = JSON.parse(String(init?.body));
    calls.push({ method: body.method, session: h.get('Mcp-Session-Id'), auth: h.get('Authorization'), credentials: init?.credentials });
    if (h.get('Authorization') !== `Bearer ${key}`) return new Response(JSON.stringify({ error: 'unauthorized', message: 'missing, invalid or revoked key' }), { status: 401 });
    if (body.method === 'initialize') return json({ jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-11-25', serverInfo: { name: 'revtrack', version: '1.0.0' }, capabilities: {} } }, { 'Mcp-Session-Id': 's-1' });
    if (body.method === 'notifications/initialized') return new Response(null, { status: 202 });
    return json({ jsonrpc: '2.0', id: 2, result: { tools: [{ name: 'get_summary' }, { name: 'list_customers' }] } });
  });
  return { f: f as unknown as typeof fetch, calls };
}

describe('MCP connection test', () => {
  it('initializes, then lists the tools in the session it was given, with the bearer key and without the cookie', async () => {
    const s = server('revtrack_sk_good');
    const r = await testMcp('http://x/api/mcp', 'revtrack_sk_good', s.f);
    expect(r).toEqual({ ok: true, name: 'revtrack', version: '1.0.0', protocolVersion: '2025-11-25', tools: ['get_summary', 'list_customers'] });
    expect(s.calls.map((c) => c.method)).toEqual(['initialize', 'notifications/initialized', 'tools/list']);
    expect(s.calls[2].session).toBe('s-1');
    expect(s.calls.every((c) => c.auth === 'Bearer revtrack_sk_good' && c.credentials === 'omit')).toBe(true);
  });

  it('reports the server\'s refusal of a wrong key', async () => {
    const r = await testMcp('http://x/api/mcp', 'revtrack_sk_bad', server('revtrack_sk_good').f);
    expect(r).toEqual({ ok: false, error: 'The server refused the key (401): missing, invalid or revoked key.' });
  });

  it('asks for a key before calling', async () => {
    const s = server('k');
    expect((await testMcp('http://x/api/mcp', ' ', s.f)).ok).toBe(false);
    expect(s.calls).toHaveLength(0);
  });
});

describe('AI assistant panel', () => {
  it('gives ready-to-paste configurations with a bearer header and the MCP URL', () => {
    const cs = clientConfigs('https://r.example/api/mcp', 'revtrack_sk_x');
    expect(cs.map((c) => c.id)).toEqual(['claude-desktop', 'cursor', 'vscode', 'claude-code', 'generic']);
    for (const c of cs.filter((c) => c.language === 'json')) expect(() => JSON.parse(c.text)).not.toThrow();
    expect(JSON.parse(cs[1].text).mcpServers.revtrack).toEqual({ url: 'https://r.example/api/mcp', headers: { Authorization: 'Bearer revtrack_sk_x' } });
    // The bridge's header argument has no space: some clients split arguments at spaces.
    expect(JSON.parse(cs[0].text).mcpServers.revtrack.args).toContain('Authorization:${REVTRACK_AUTH}');
  });

  it('uses the key just created in this workspace, else a placeholder, and shows the connection test result', async () => {
    as('member');
    justCreatedKey.value = null;
    const { unmount } = render(<Assistant />);
    expect(screen.getByTestId('config-cursor').textContent).toContain('Bearer YOUR_API_KEY');
    unmount();
    justCreatedKey.value = { workspace: 'demo', name: 'assistant', value: 'revtrack_sk_new' };
    const s = server('revtrack_sk_new');
    vi.stubGlobal('fetch', s.f);
    render(<Assistant />);
    expect(screen.getByTestId('config-cursor').textContent).toContain('Bearer revtrack_sk_new');
    expect((screen.getByTestId('mcp-url') as HTMLInputElement).value).toBe(`${location.origin}/api/mcp`);
    fireEvent.input(screen.getByLabelText(/Key to test with/), { target: { value: 'revtrack_sk_new' } });
    fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    expect((await screen.findByTestId('mcp-test-result')).textContent).toContain('Connected to revtrack 1.0.0 (protocol 2025-11-25): 2 tools');
  });
});
