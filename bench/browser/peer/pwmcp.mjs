// Peer side of bench/browser: drives Playwright MCP (npm @playwright/mcp) over
// stdio with the MCP SDK client, on the same Chromium binary and the same local
// pages as Gatehouse, and prints one JSON object of measurements.
//   node pwmcp.mjs BASE_URL ROUNDS CHROMIUM_PATH
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [base, roundsArg, chromium] = process.argv.slice(2);
const rounds = Number(roundsArg || 20);
const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, "node_modules", "@playwright", "mcp", "cli.js");

async function start(extra = []) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "--headless", "--isolated", "--no-sandbox", "--executable-path", chromium, ...extra],
    stderr: "ignore",
  });
  const client = new Client({ name: "gatehouse-bench", version: "1" });
  await client.connect(transport);
  return { client, transport };
}

const text = (res) => (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const call = async (c, name, args) => {
  const res = await c.callTool({ name, arguments: args });
  if (res.isError) throw new Error(name + ": " + text(res).slice(0, 300));
  return res;
};
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const time = async (fn) => { const t = performance.now(); const r = await fn(); return [performance.now() - t, r]; };

// The snapshot text: Playwright MCP returns it inline or as a YAML block.
function snapshotOf(res) {
  const t = text(res);
  const m = t.match(/```yaml\n([\s\S]*?)```/);
  return m ? m[1] : t;
}

function pss(pid) {
  try {
    const m = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8").match(/^Pss:\s+(\d+) kB/m);
    return m ? Number(m[1]) : 0;
  } catch { return 0; }
}
function tree(root) {
  const kids = new Map();
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const st = readFileSync(`/proc/${e}/stat`, "utf8");
      const ppid = Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(e));
    } catch {}
  }
  const out = [];
  const walk = (p) => { out.push(p); for (const k of kids.get(p) || []) walk(k); };
  walk(root);
  return out;
}

const out = {};
{
  const { client } = await start();
  const tools = await client.listTools();
  out.tools = tools.tools.length;
  // Warm the browser once (first launch is not what we compare).
  await call(client, "browser_navigate", { url: base + "/catalog?warm=1" });
  const nav = [], snap = [], both = [];
  let snapText = "";
  for (let i = 0; i < rounds; i++) {
    const [dn] = await time(() => call(client, "browser_navigate", { url: `${base}/catalog?r=${i}` }));
    const [ds, sr] = await time(() => call(client, "browser_snapshot", {}));
    nav.push(dn); snap.push(ds); both.push(dn + ds);
    snapText = snapshotOf(sr);
  }
  out.navigate_ms = median(nav);
  out.snapshot_ms = median(snap);
  out.navigate_snapshot_ms = median(both);
  out.snapshot_chars = snapText.length;
  out.snapshot_refs = (snapText.match(/\[ref=[a-z0-9]+\]/g) || []).length;
  // Click by ref, default settle.
  const clicks = [];
  for (let i = 0; i < rounds; i++) {
    await call(client, "browser_navigate", { url: `${base}/click?r=${i}` });
    const s = snapshotOf(await call(client, "browser_snapshot", {}));
    const m = s.match(/button "Add one"[^\n]*\[ref=([a-z0-9]+)\]/);
    if (!m) throw new Error("no button in snapshot: " + s.slice(0, 500));
    const [dc] = await time(() => call(client, "browser_click", { element: "Add one button", target: m[1] }));
    clicks.push(dc);
  }
  out.click_ms_default_settle = median(clicks);
  // Time to a usable new session: after browser_close, the next call opens a
  // fresh isolated context; time its first browser_snapshot (of about:blank),
  // 1 s after the previous one and back to back (same as the Gatehouse side).
  for (const pause of [1000, 0]) {
    const fresh = [];
    for (let i = 0; i < Math.min(rounds, 10); i++) {
      await call(client, "browser_close", {});
      await new Promise((r) => setTimeout(r, pause));
      const [d] = await time(() => call(client, "browser_snapshot", {}));
      fresh.push(d);
    }
    out[pause ? "new_session_ms" : "new_session_b2b_ms"] = median(fresh);
  }
  // A new task's first navigate + snapshot, back to back (after browser_close).
  {
    const fresh = [];
    for (let i = 0; i < Math.min(rounds, 10); i++) {
      await call(client, "browser_close", {});
      const [d] = await time(async () => {
        await call(client, "browser_navigate", { url: `${base}/click?f=${i}` });
        return call(client, "browser_snapshot", {});
      });
      fresh.push(d);
    }
    out.new_session_b2b_nav_ms = median(fresh);
  }
  await client.close();
}
{
  const { client } = await start(["--timeout-settle", "0"]);
  await call(client, "browser_navigate", { url: base + "/click?warm=1" });
  const clicks = [];
  for (let i = 0; i < rounds; i++) {
    await call(client, "browser_navigate", { url: `${base}/click?s=${i}` });
    const s = snapshotOf(await call(client, "browser_snapshot", {}));
    const ref = s.match(/button "Add one"[^\n]*\[ref=([a-z0-9]+)\]/)[1];
    const [dc] = await time(() => call(client, "browser_click", { element: "Add one button", target: ref }));
    clicks.push(dc);
  }
  out.click_ms_settle0 = median(clicks);
  await client.close();
}
{
  // Memory of 10 concurrent sessions: with --isolated each session is one MCP
  // server with its own browser, the peer's unit of isolation.
  const sessions = [];
  for (let i = 0; i < 10; i++) sessions.push(await start());
  await Promise.all(sessions.map(({ client }, i) => call(client, "browser_navigate", { url: `${base}/catalog?m=${i}` })));
  await new Promise((r) => setTimeout(r, 1000));
  let kb = 0;
  for (const { transport } of sessions) for (const p of tree(transport.pid)) kb += pss(p);
  out.mem10_pss_kb = kb;
  for (const { client } of sessions) await client.close();
}
console.log(JSON.stringify(out));
