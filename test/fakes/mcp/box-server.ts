// A small MCP server (stdio, the official SDK's low-level Server) that tries what a hostile or compromised server
// would: read files, show its environment, connect to a port on the machine, write files, reach the network through
// HTTP_PROXY, start a process of its own and refuse to exit, and die. Each tool says what happened (the content, or the error code) so a test can assert what a
// server inside the sandbox can and cannot do.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import net from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";

const object = (properties: Record<string, object> = {}) => ({ type: "object" as const, properties });
const readOnly = { readOnlyHint: true };
const tools: Tool[] = [
  { name: "read_file", description: "Reads a file.", inputSchema: object({ path: { type: "string" } }), annotations: readOnly },
  { name: "write_file", description: "Writes a file.", inputSchema: object({ path: { type: "string" }, text: { type: "string" } }), annotations: readOnly },
  { name: "env", description: "This process's environment.", inputSchema: object(), annotations: readOnly },
  { name: "whoami", description: "Its working folder and HOME.", inputSchema: object(), annotations: readOnly },
  { name: "connect", description: "Opens a TCP connection.", inputSchema: object({ host: { type: "string" }, port: { type: "number" } }), annotations: readOnly },
  { name: "http_get", description: "GETs a URL through HTTP_PROXY.", inputSchema: object({ url: { type: "string" } }), annotations: readOnly },
  { name: "crash", description: "Exits in the middle of the call.", inputSchema: object(), annotations: readOnly },
  {
    name: "linger",
    description: "Starts a process of its own (its command line holds `tag`) and stops exiting when stdin closes.",
    inputSchema: object({ tag: { type: "string" } }),
    annotations: readOnly,
  },
];

const server = new Server({ name: "box-server", version: "1.0.0" }, { capabilities: { tools: {} } });
const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });
const code = (error: unknown) => `error: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;

function connect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", (error) => resolve(code(error)));
  });
}

/** A plain-HTTP GET in absolute form to the proxy of HTTP_PROXY, as curl or npm would send it. */
function httpGet(url: string): Promise<string> {
  const proxy = process.env.HTTP_PROXY;
  if (!proxy) return Promise.resolve("error: no HTTP_PROXY");
  const via = new URL(proxy);
  return new Promise((resolve) => {
    const req = request({ host: via.hostname, port: via.port, path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve(`${res.statusCode} ${body.trim()}`));
    });
    req.on("error", (error) => resolve(code(error)));
    req.end();
  });
}

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const args = request.params.arguments ?? {};
  switch (request.params.name) {
    case "read_file":
      try {
        return text(readFileSync(String(args.path), "utf8"));
      } catch (error) {
        return text(code(error));
      }
    case "write_file":
      try {
        writeFileSync(String(args.path), String(args.text ?? ""));
        return text("written");
      } catch (error) {
        return text(code(error));
      }
    case "env":
      return text(JSON.stringify(process.env));
    case "whoami":
      return text(JSON.stringify({ cwd: process.cwd(), home: process.env.HOME }));
    case "connect":
      return text(await connect(String(args.host), Number(args.port)));
    case "http_get":
      return text(await httpGet(String(args.url)));
    case "crash":
      process.stderr.write("crashing on purpose\n");
      process.exit(3);
    case "linger": {
      // One process that never forks, its command line holding the tag (a shell would fork a child that carries the
      // tag until it execs, and the count would race).
      const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)", String(args.tag).replace(/[^\w-]/g, "")], { detached: true, stdio: "ignore" });
      child.unref();
      setInterval(() => {}, 1 << 30);
      process.stdin.removeAllListeners("end");
      process.stdin.on("end", () => process.stderr.write("stdin closed; staying\n"));
      return text(`started ${child.pid}`);
    }
    default:
      return { content: [{ type: "text", text: `unknown tool ${request.params.name}` }], isError: true };
  }
});

await server.connect(new StdioServerTransport());
process.stderr.write("box server ready\n");
