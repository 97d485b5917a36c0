import { z } from "zod";
import { parseAllowlist, type Allowlist } from "../net/allowlist.js";
import { expand } from "./expand.js";

// mcp.json in the format Claude Code and Claude Desktop use:
//   {"mcpServers": {"<name>": {"command", "args", "env", "cwd"} | {"type": "http", "url", "headers"} | {"type": "sse", …}}}
// plus Switchboard's own per-server fields: "approval", "disabled", and for stdio servers "sandbox" with its
// "allow_hosts" and "writable_cwd". Every problem names the server and the field.

export type Approval = "always" | "writes" | "never";

/** How a stdio server runs inside the OS sandbox (`"sandbox": true`). */
export interface ServerSandbox {
  /** `"allow_hosts"`: the host names it may reach through the sandbox's proxy; empty: no network at all. */
  allowHosts: Allowlist;
  /** `"writable_cwd": true`: its working folder is writable (read-only by default). */
  writableCwd: boolean;
}

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
      /** Run inside the OS sandbox (src/mcp/sandboxed.ts); null: with the gateway's rights. */
      sandbox: ServerSandbox | null;
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
  allow_hosts: z.array(text("a host name such as api.github.com or *.example.com"), { message: 'must be a list of host names, e.g. ["api.github.com"]' }).optional(),
  writable_cwd: z.boolean({ message: "must be true or false" }).optional(),
  ...common,
});
const remoteEntry = z.object({
  type: z.enum(["http", "sse"]),
  url: z.url({ protocol: /^https?$/, message: "must be an http:// or https:// URL" }),
  headers: stringMap.optional(),
  ...common,
});

const KNOWN = new Set(["type", "command", "args", "env", "cwd", "url", "headers", "approval", "sandbox", "allow_hosts", "writable_cwd", "disabled"]);
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
  const sandbox = readSandbox(stdio, at, problems);
  if (sandbox === undefined) return null;
  return { ...common, transport: "stdio", command: stdio.command, args: stdio.args ?? [], env: stdio.env ?? {}, cwd: stdio.cwd ?? null, sandbox };
}

/** The sandbox fields of a stdio entry; undefined after a problem. */
function readSandbox(stdio: z.output<typeof stdioEntry>, at: string, problems: string[]): ServerSandbox | null | undefined {
  const before = problems.length;
  if (!stdio.sandbox) {
    for (const field of ["allow_hosts", "writable_cwd"] as const) {
      if (stdio[field] !== undefined) problems.push(`${at}.${field}: applies only with "sandbox": true (outside the sandbox a server has the gateway's own rights)`);
    }
    return problems.length === before ? null : undefined;
  }
  if (stdio.writable_cwd && stdio.cwd === undefined) problems.push(`${at}.writable_cwd: needs "cwd", the folder to make writable`);
  const hosts = stdio.allow_hosts ?? [];
  const parsed = parseAllowlist(hosts.join(","));
  const url = hosts.find((h) => h.includes("://"));
  if (url) problems.push(`${at}.allow_hosts: "${url}" is a URL; write the host name alone, e.g. ${JSON.stringify(hostOf(url))}`);
  else if (hosts.some((h) => h.includes(","))) problems.push(`${at}.allow_hosts: write one host name per item, without commas`);
  else if ("error" in parsed) problems.push(`${at}.allow_hosts: ${parsed.error}`);
  else if (parsed.allow.ranges.length > 0) {
    // As SANDBOX_ALLOW_HOSTS: an address would skip the check of what a name resolves to.
    problems.push(`${at}.allow_hosts: takes host names and *.domain wildcards only, not IP addresses or ranges`);
  }
  if (problems.length > before || "error" in parsed) return undefined;
  return { allowHosts: parsed.allow, writableCwd: stdio.writable_cwd ?? false };
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

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "api.example.com";
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
