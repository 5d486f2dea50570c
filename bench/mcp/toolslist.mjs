// Measures the size of an MCP server's tools/list result, as a client would
// put it in a model's context: the compact JSON of {"tools":[…]}, in chars
// and in tokens estimated as chars/4.
// Usage: node toolslist.mjs <command> [args...]   (a stdio MCP server)
//        node toolslist.mjs --file <tools.json>   (a recorded {"tools":[…]})
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const argv = process.argv.slice(2);
let tools;
if (argv[0] === "--file") {
  tools = JSON.parse(readFileSync(argv[1], "utf8")).tools;
} else {
  const client = new Client({ name: "gatehouse-toolslist", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: argv[0], args: argv.slice(1), stderr: "ignore" }));
  tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  await client.close();
}
const chars = JSON.stringify({ tools }).length;
console.log(JSON.stringify({ tools: tools.length, names: tools.map((t) => t.name), chars, tokens: Math.round(chars / 4) }));
