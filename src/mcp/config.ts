import { z } from "zod";
import { expand } from "./expand.js";

// mcp.json in the format Claude Code and Claude Desktop use:
//   {"mcpServers": {"<name>": {"command", "args", "env", "cwd"} | {"type": "http", "url", "headers"} | {"type": "sse", …}}}
// plus Switchboard's own per-server fields, "approval" and "sandbox". Every problem names the server and the field.

export type Approval = "always" | "writes" | "never";

interface Common {
  name: string;
  /** Who must approve a call: "writes" (default) asks for tools not annotated read-only, "always", or "never". */
  approval: Approval;
  /** `"disabled": true`: configured but not connected (its tools are unavailable). */
  disabled: boolean;
}

export type ServerConfig =
  | (Common & {
      transport: "stdio";
      command: string;
      args: string[];
      /** The whole environment the server gets, besides PATH and HOME. */
      env: Record<string, string>;
      cwd: string | null;
      /** Run inside the OS sandbox (see spawn.ts); refused while the sandbox is not available. */
      sandbox: boolean;
    })
  | (Common & { transport: "http" | "sse"; url: string; headers: Record<string, string> });

export interface McpConfig {
  /** Where it was read from, for messages; null when there is no file. */
  source: string | null;
  servers: ServerConfig[];
  /** Things that load but are ignored (fields of other hosts), one line each. */
  warnings: string[];
  /** Values the logs must never show: header values, env values, passwords in URLs. */
  secrets: string[];
}

export const NO_MCP: McpConfig = { source: null, servers: [], warnings: [], secrets: [] };

export class McpConfigError extends Error {
  override name = "McpConfigError";
}

/** A server's name becomes part of tool names (`mcp__<name>__<tool>`), which the Messages API limits. */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,40}$/;
const APPROVAL = z.enum(["always", "writes", "never"], { message: 'must be "always", "writes" or "never"' });
const text = (what: string) =>
  z
    .string({ message: `must be ${what}` })
    .trim()
    .min(1, { message: `must be ${what}` });
const stringMap = z.record(z.string(), z.string({ message: "must be text (write numbers and booleans in quotes)" }), {
  message: "must be an object of names to text values",
});

const common = {
  approval: APPROVAL.optional(),
  disabled: z.boolean({ message: "must be true or false" }).optional(),
};
const stdioEntry = z.object({
  type: z.literal("stdio").optional(),
  command: text("the program to run, e.g. npx"),
  args: z.array(z.string({ message: "must be text" }), { message: "must be a list of arguments" }).optional(),
  env: stringMap.optional(),
  cwd: text("a folder").optional(),
  sandbox: z.boolean({ message: "must be true or false" }).optional(),
  ...common,
});
const remoteEntry = z.object({
  type: z.enum(["http", "sse"]),
  url: z.url({ protocol: /^https?$/, message: "must be an http:// or https:// URL" }),
  headers: stringMap.optional(),
  ...common,
});

const KNOWN = new Set(["type", "command", "args", "env", "cwd", "url", "headers", "approval", "sandbox", "disabled"]);
/** Values shorter than this are not treated as secrets: "true" or "info" would be scrubbed from every log line. */
const MIN_SECRET = 8;

/**
 * Reads mcp.json's text. `env` fills `${VAR}` references (command, args, env, cwd, url, headers). Throws
 * McpConfigError listing every problem as `<source>: mcpServers.<name>.<field>: <what is wrong>`.
 */
export function parseMcpConfig(json: string, source: string, env: Readonly<Record<string, string | undefined>>): McpConfig {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (error) {
    throw new McpConfigError(`${source}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!isObject(data) || !isObject(data.mcpServers)) {
    throw new McpConfigError(
      `${source}: must be a JSON object with an "mcpServers" object, e.g. {"mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}}}`,
    );
  }
  const problems: string[] = [];
  const warnings: string[] = [];
  const servers: ServerConfig[] = [];
  for (const [name, raw] of Object.entries(data.mcpServers)) {
    const at = `mcpServers.${JSON.stringify(name).slice(1, -1)}`;
    const before = problems.length;
    if (!SERVER_NAME.test(name) || name.includes("__") || name.endsWith("_")) {
      problems.push(
        `${at}: a server's name may use only A-Z, a-z, 0-9, _ and - (at most 40 characters, no "__", not ending in "_"), because its tools are called mcp__<name>__<tool>; rename it`,
      );
    }
    if (!isObject(raw)) {
      problems.push(`${at}: must be an object such as {"command": "npx", "args": [...]} or {"type": "http", "url": "https://…"}`);
      continue;
    }
    const entry = expandAll(raw, env, at, problems);
    const server = readEntry(name, entry, at, problems);
    for (const key of Object.keys(raw).filter((k) => !KNOWN.has(k))) warnings.push(`${source}: ${at}.${key} is not a field Switchboard reads; it is ignored`);
    if (server && problems.length === before) servers.push(server);
  }
  if (problems.length) throw new McpConfigError(`Invalid MCP configuration:\n${problems.map((p) => `  ${source}: ${p}`).join("\n")}`);
  return { source, servers, warnings, secrets: secretsOf(servers) };
}

function readEntry(name: string, entry: Record<string, unknown>, at: string, problems: string[]): ServerConfig | null {
  const type = entry.type;
  if (type !== undefined && type !== "stdio" && type !== "http" && type !== "sse") {
    problems.push(`${at}.type: must be "stdio" (a program), "http" (Streamable HTTP) or "sse" (older HTTP servers), got ${JSON.stringify(type)}`);
    return null;
  }
  if (type === undefined && entry.url !== undefined && entry.command === undefined) {
    problems.push(`${at}.type: an entry with a url needs "type": "http" (Streamable HTTP) or "type": "sse" (older servers)`);
    return null;
  }
  const remote = type === "http" || type === "sse";
  const parsed = (remote ? remoteEntry : stdioEntry).safeParse(entry);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${at}${issue.path.map((p) => `.${String(p)}`).join("")}: ${issue.message}`);
    return null;
  }
  const common = { name, approval: parsed.data.approval ?? "writes", disabled: parsed.data.disabled ?? false };
  if ("url" in parsed.data) return { ...common, transport: parsed.data.type, url: parsed.data.url, headers: parsed.data.headers ?? {} };
  const stdio = parsed.data as z.output<typeof stdioEntry>;
  if (stdio.sandbox) {
    problems.push(
      `${at}.sandbox: running stdio servers inside the sandbox arrives with the workspace and is not available yet; remove "sandbox" to run it with the gateway's rights (see docs/admin/mcp.md)`,
    );
    return null;
  }
  return { ...common, transport: "stdio", command: stdio.command, args: stdio.args ?? [], env: stdio.env ?? {}, cwd: stdio.cwd ?? null, sandbox: false };
}

/** The entry with `${VAR}` expanded in the fields that take it; each unset variable is a problem of its field. */
function expandAll(raw: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>, at: string, problems: string[]): Record<string, unknown> {
  const one = (value: unknown, field: string): unknown => {
    if (typeof value !== "string") return value;
    const result = expand(value, env);
    if (result.ok) return result.value;
    problems.push(`${at}.${field}: ${result.error}`);
    return value;
  };
  const map = (value: unknown, field: string) => (isObject(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, one(v, `${field}.${k}`)])) : value);
  return {
    ...raw,
    command: one(raw.command, "command"),
    args: Array.isArray(raw.args) ? raw.args.map((a, i) => one(a, `args[${i}]`)) : raw.args,
    env: map(raw.env, "env"),
    cwd: one(raw.cwd, "cwd"),
    url: one(raw.url, "url"),
    headers: map(raw.headers, "headers"),
  };
}

/** Header and env values (and each word of one, for `Bearer <token>`), and passwords inside URLs. */
function secretsOf(servers: ServerConfig[]): string[] {
  const found = new Set<string>();
  const add = (value: string) => {
    for (const part of [value, ...value.split(/\s+/)]) if (part.length >= MIN_SECRET) found.add(part);
  };
  for (const server of servers) {
    if (server.transport === "stdio") Object.values(server.env).forEach(add);
    else {
      Object.values(server.headers).forEach(add);
      const url = new URL(server.url);
      if (url.password) add(decodeURIComponent(url.password));
    }
  }
  return [...found];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
