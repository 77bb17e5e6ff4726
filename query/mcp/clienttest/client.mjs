// Drives revtrack's MCP endpoint with the official TypeScript SDK, as an MCP client application
// would: StreamableHTTPClientTransport with the bearer header, initialize, tools/list, then each call
// of the plan. It prints one JSON document on stdout for the Go test (query/mcp) to check.
//
// Input (stdin): {"url": "...", "key": "..." | null, "calls": [{"name": "...", "arguments": {...}}]}
// Output: {"connected": true, "serverVersion": {...}, "protocolVersion": "...", "sessionId": "...",
//          "tools": [...], "results": [{"name", "isError", "text"}]}
//      or {"connected": false, "error": {"name", "code", "message"}} when the connection is refused.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const readStdin = async () => {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
};

const plan = await readStdin();
const headers = plan.key ? { Authorization: `Bearer ${plan.key}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers } });
const client = new Client({ name: "revtrack-clienttest", version: "1.0.0" });

const out = {};
try {
  await client.connect(transport);
} catch (err) {
  out.connected = false;
  out.error = { name: err?.name, code: err?.code ?? null, message: String(err?.message ?? err) };
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}
out.connected = true;
out.serverVersion = client.getServerVersion();
out.protocolVersion = transport.protocolVersion ?? null;
out.sessionId = transport.sessionId ?? null;
out.instructions = client.getInstructions() ?? null;
out.tools = (await client.listTools()).tools;
out.results = [];
for (const call of plan.calls ?? []) {
  try {
    const res = await client.callTool({ name: call.name, arguments: call.arguments ?? {} });
    out.results.push({
      name: call.name,
      isError: res.isError === true,
      text: (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join(""),
    });
  } catch (err) {
    // A protocol-level failure: the Go test fails on it, since tool failures must be tool errors.
    out.results.push({ name: call.name, protocolError: { code: err?.code ?? null, message: String(err?.message ?? err) } });
  }
}
await client.close();
process.stdout.write(JSON.stringify(out));
