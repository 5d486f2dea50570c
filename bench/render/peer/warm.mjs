// Peer side of bench/render, warm: one Playwright MCP server (npm
// @playwright/mcp, --isolated, the given Chromium), its browser launched by a
// first browser_navigate, then N browser_navigate calls to the same page
// (a new query each, a pause before each, as for Gatehouse's warm rendered
// calls); prints the median and minimum in ms. Uses bench/browser/peer's
// node_modules.
//   node warm.mjs URL CHROMIUM_PATH N PAUSE_MS
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";

const here = dirname(fileURLToPath(import.meta.url));
const peer = join(here, "..", "..", "browser", "peer");
const require = createRequire(join(peer, "package.json"));
const { Client } = await import(require.resolve("@modelcontextprotocol/sdk/client/index.js"));
const { StdioClientTransport } = await import(require.resolve("@modelcontextprotocol/sdk/client/stdio.js"));
const [url, chromium, nArg, pauseArg] = process.argv.slice(2);
const bin = join(peer, "node_modules", "@playwright", "mcp", "cli.js");
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [bin, "--headless", "--isolated", "--no-sandbox", "--executable-path", chromium],
  stderr: "ignore",
});
const client = new Client({ name: "gatehouse-render-bench", version: "1" });
await client.connect(transport);
const nav = async (q) => {
  const res = await client.callTool({ name: "browser_navigate", arguments: { url: url + "?pw=" + q } });
  if (res.isError) throw new Error("navigate failed: " + JSON.stringify(res.content).slice(0, 300));
};
await nav("launch");
const times = [];
for (let i = 0; i < Number(nArg || 9); i++) {
  await sleep(Number(pauseArg || 700));
  const t = performance.now();
  await nav("warm" + i);
  times.push(performance.now() - t);
}
await client.close();
times.sort((a, b) => a - b);
console.log(JSON.stringify({ warm_navigate_ms: times[Math.floor(times.length / 2)], min_ms: times[0] }));
