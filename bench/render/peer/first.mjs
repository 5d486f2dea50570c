// Peer side of bench/render: the time from spawning a fresh Playwright MCP
// server (npm @playwright/mcp, --isolated, the given Chromium) to the result
// of its first browser_navigate, median of N runs. Uses bench/browser/peer's
// node_modules.
//   node first.mjs URL CHROMIUM_PATH N
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const peer = join(here, "..", "..", "browser", "peer");
const require = createRequire(join(peer, "package.json"));
const { Client } = await import(require.resolve("@modelcontextprotocol/sdk/client/index.js"));
const { StdioClientTransport } = await import(require.resolve("@modelcontextprotocol/sdk/client/stdio.js"));
const [url, chromium, nArg] = process.argv.slice(2);
const bin = join(peer, "node_modules", "@playwright", "mcp", "cli.js");
const times = [];
for (let i = 0; i < Number(nArg || 5); i++) {
  const t = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "--headless", "--isolated", "--no-sandbox", "--executable-path", chromium],
    stderr: "ignore",
  });
  const client = new Client({ name: "gatehouse-render-bench", version: "1" });
  await client.connect(transport);
  const res = await client.callTool({ name: "browser_navigate", arguments: { url: url + "?pw=" + i } });
  if (res.isError) throw new Error("navigate failed");
  times.push(performance.now() - t);
  await client.close();
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ first_navigate_ms: times[Math.floor(times.length / 2)] }));
