import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { toolNameFor } from "./names.js";

// tools/list, every page, each tool checked on its own: a server's list is untrusted input, and one bad entry (no
// input schema, a schema of megabytes, a name used twice) leaves that tool out with a line in the log, not the server.

/** A server's tool as the gateway offers it. */
export interface ListedTool {
  /** The model's name: mcp__<server>__<tool>, made to fit the Messages API's rule. */
  name: string;
  /** The server's name for it, used in tools/call. */
  original: string;
  description: string;
  inputSchema: { type: "object"; [key: string]: unknown };
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
}

export interface Listing {
  tools: ListedTool[];
  /** One line per tool left out or renamed. */
  notes: string[];
}

export const MAX_TOOLS_PER_SERVER = 500;
const MAX_PAGES = 100;
/** A description is cut here: it goes into every model request. */
export const MAX_DESCRIPTION = 2000;
/** A tool whose input schema is larger than this (as JSON) is left out. */
export const MAX_SCHEMA_BYTES = 32 * 1024;

const Page = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** Every tool of the server, page after page (bounded), checked; `signal` ends it. */
export async function listTools(client: Client, server: string, signal: AbortSignal): Promise<Listing> {
  const raw: unknown[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES && raw.length <= MAX_TOOLS_PER_SERVER; page++) {
    const result = await client.request({ method: "tools/list", params: cursor ? { cursor } : {} }, Page, { signal, timeout: 2_147_483_647 });
    raw.push(...result.tools);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return vetTools(server, raw);
}

export function vetTools(server: string, raw: readonly unknown[]): Listing {
  const tools: ListedTool[] = [];
  const notes: string[] = [];
  const names = new Set<string>();
  const originals = new Set<string>();
  for (const [index, entry] of raw.entries()) {
    if (tools.length >= MAX_TOOLS_PER_SERVER) {
      notes.push(`the server lists ${raw.length} tools; only the first ${MAX_TOOLS_PER_SERVER} are offered`);
      break;
    }
    const parsed = ToolSchema.safeParse(entry);
    if (!parsed.success) {
      notes.push(`tool #${index + 1} of the list is left out: ${parsed.error.issues[0]?.path.join(".") || "entry"}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
      continue;
    }
    const tool = parsed.data;
    const shown = JSON.stringify(tool.name.slice(0, 80));
    if (tool.name === "") {
      notes.push(`tool #${index + 1} has an empty name and is left out`);
      continue;
    }
    if (originals.has(tool.name)) {
      notes.push(`tool ${shown} is listed twice; the second is left out`);
      continue;
    }
    const schemaBytes = Buffer.byteLength(JSON.stringify(tool.inputSchema));
    if (schemaBytes > MAX_SCHEMA_BYTES) {
      notes.push(`tool ${shown} is left out: its input schema is ${schemaBytes} bytes, more than ${MAX_SCHEMA_BYTES}`);
      continue;
    }
    const name = toolNameFor(server, tool.name, names);
    if (name !== `mcp__${server}__${tool.name}`) notes.push(`tool ${shown} is offered as ${name} (the Messages API takes A-Z, a-z, 0-9, _ and -, at most 64 characters)`);
    names.add(name);
    originals.add(tool.name);
    const text = (tool.description ?? tool.title ?? tool.annotations?.title ?? "").trim();
    const a = tool.annotations ?? {};
    tools.push({
      name,
      original: tool.name,
      description: text === "" ? `The tool ${tool.name} of the MCP server ${server}.` : text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION)}…` : text,
      inputSchema: tool.inputSchema as ListedTool["inputSchema"],
      readOnly: a.readOnlyHint === true,
      destructive: a.destructiveHint === true,
      idempotent: a.idempotentHint === true,
    });
  }
  return { tools, notes };
}
