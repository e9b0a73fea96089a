// A real MCP client (the TypeScript SDK's, over stdio) doing what an agent does with a
// filesystem server, for agmem's end-to-end test of its MCP proxy:
//
//   node client.mjs DIR -- CMD [ARGS...]
//
// starts CMD as the server, offers DIR as its root, lists the tools, writes
// DIR/notes.md, reads it back, reads DIR/missing.md (which fails), closes, and prints
// what it got as one JSON object.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { pathToFileURL } from "node:url";

const [dir, dashes, command, ...args] = process.argv.slice(2);
if (dashes !== "--" || !command) {
  console.error("usage: node client.mjs DIR -- CMD [ARGS...]");
  process.exit(1);
}

// The whole environment: by default the SDK passes the server only a few variables,
// and agmem's (AGMEM_SESSION, PATH to this agmem) must reach the proxy.
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "agmem-e2e", version: "1.0.0" }, { capabilities: { roots: { listChanged: true } } });
// The server asks the client for its roots: a request of the server's own, with an id
// of its own, that the proxy must not take for an answer to the client's calls.
client.setRequestHandler(ListRootsRequestSchema, async () => ({
  roots: [{ uri: pathToFileURL(dir).href, name: "work" }],
}));
await client.connect(transport);

const notes = "# Release notes\n\n- The proxy records every tool call.\n- Nothing changes for the client or the server.\n";
const tools = await client.listTools();
const write = await client.callTool({ name: "write_file", arguments: { path: `${dir}/notes.md`, content: notes } });
const read = await client.callTool({ name: "read_text_file", arguments: { path: `${dir}/notes.md` } });
const missing = await client.callTool({ name: "read_text_file", arguments: { path: `${dir}/missing.md` } });
await client.close();

console.log(JSON.stringify({ tools: tools.tools.map((t) => t.name), notes, write, read, missing }));
