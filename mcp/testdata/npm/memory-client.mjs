// A real MCP client (the TypeScript SDK's, over stdio) reading agmem's memory as an
// agent does, for agmem's end-to-end test of "agmem mcp serve":
//
//   node memory-client.mjs QUERY -- CMD [ARGS...]
//
// starts CMD as the server, lists its tools, searches for QUERY, takes the first hit's
// id from the answer, asks for its timeline and for it whole, lists the sessions, makes
// one bad call, and prints what it got as one JSON object.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [query, dashes, command, ...args] = process.argv.slice(2);
if (dashes !== "--" || !command) {
  console.error("usage: node memory-client.mjs QUERY -- CMD [ARGS...]");
  process.exit(1);
}
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "agmem-memory-e2e", version: "1.0.0" });
await client.connect(transport);

const text = (r) => (r.content ?? []).map((c) => c.text ?? "").join("");
const tools = await client.listTools();
const search = await client.callTool({ name: "search", arguments: { query, limit: 5 } });
const first = text(search).split("\n")[1]?.split(" ")[0] ?? "";
const timeline = await client.callTool({ name: "timeline", arguments: { id: first, before: 2, after: 2 } });
const observations = await client.callTool({ name: "get_observations", arguments: { ids: [first] } });
const sessions = await client.callTool({ name: "sessions", arguments: { limit: 5 } });
const bad = await client.callTool({ name: "search", arguments: { query: "\"never closed" } });
const instructions = client.getInstructions();
await client.close();

console.log(JSON.stringify({
  tools: tools.tools.map((t) => t.name).sort(),
  instructions,
  first,
  search: { text: text(search), isError: !!search.isError },
  timeline: { text: text(timeline), isError: !!timeline.isError },
  observations: { text: text(observations), isError: !!observations.isError },
  sessions: { text: text(sessions), isError: !!sessions.isError },
  bad: { text: text(bad), isError: !!bad.isError },
}));
