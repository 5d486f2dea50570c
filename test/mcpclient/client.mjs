// A published MCP client (the TypeScript SDK's Client) against `gatehouse mcp`.
// Usage:
//   node client.mjs stdio <gatehouse-binary> <page-url> <expected-text>
//   node client.mjs http  <endpoint-url>     <page-url> <expected-text> [token]
// Asserts on tools/list (web_extract, web_read, web_check with schemas) and on
// one tools/call (web_extract of page-url returns a row whose content holds
// expected-text inside a content boundary). Prints one JSON summary line on
// success; exits 1 with a message on any failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function fail(msg) {
  console.error("mcpclient: " + msg);
  process.exit(1);
}

const [mode, target, pageURL, expected, token] = process.argv.slice(2);
if (!mode || !target || !pageURL || !expected) fail("usage: client.mjs stdio|http <binary|url> <page-url> <expected-text> [token]");

let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args: ["mcp"], env: process.env, stderr: "inherit" });
} else if (mode === "http") {
  const headers = token ? { Authorization: "Bearer " + token } : {};
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
} else {
  fail("unknown mode " + mode);
}

const client = new Client({ name: "gatehouse-npm-test", version: "1.0.0" });
try {
  await client.connect(transport);
  const info = client.getServerVersion();
  if (!info || info.name !== "gatehouse") fail("serverInfo: " + JSON.stringify(info));

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const want of ["web_extract", "web_read", "web_check"]) {
    const t = tools.find((x) => x.name === want);
    if (!t) fail("tools/list lacks " + want + ": " + names.join(","));
    if (!t.inputSchema || t.inputSchema.type !== "object" || !t.inputSchema.properties) fail(want + ": no input schema");
    if (!t.description) fail(want + ": no description");
  }
  const ex = tools.find((x) => x.name === "web_extract");
  if (!ex.inputSchema.properties.urls) fail("web_extract schema lacks urls");

  const res = await client.callTool({ name: "web_extract", arguments: { urls: [pageURL] } });
  if (res.isError) fail("web_extract isError: " + JSON.stringify(res));
  const text = res.content && res.content[0] && res.content[0].type === "text" ? res.content[0].text : null;
  if (!text) fail("web_extract: no text content");
  const body = JSON.parse(text);
  const row = body.results && body.results[0];
  if (!row || row.error) fail("web_extract row: " + text.slice(0, 500));
  if (!row.content.includes(expected)) fail("content lacks " + JSON.stringify(expected) + ": " + row.content.slice(0, 300));
  if (!row.content.startsWith("<<<UNTRUSTED WEB CONTENT nonce=")) fail("content not inside a boundary");

  const bad = await client.callTool({ name: "web_read", arguments: { path: "../../etc/passwd" } });
  const badBody = JSON.parse(bad.content[0].text);
  if (!bad.isError || badBody.reason !== "read_outside_store") fail("web_read escape not refused: " + bad.content[0].text);

  console.log(JSON.stringify({ ok: true, mode, tools: names, title: row.title, refused: badBody.reason }));
  await client.close();
} catch (e) {
  fail((e && e.stack) || String(e));
}
