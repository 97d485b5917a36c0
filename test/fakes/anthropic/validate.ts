// Request validation for the fake Anthropic Messages API.
//
// The point of the fake is to be at least as strict as the real API, so that a
// client bug (e.g. an orphaned tool_use in the history) fails a test with a
// 400 exactly like it would in production. Messages mirror the real API's
// wording so assertions written against the fake stay meaningful.
//
// Rules run as separate passes in a fixed order (first failure wins), so the
// error a test sees does not depend on which message happens to come first.

export interface MessagesRequest {
  model: string;
  max_tokens: number;
  system?: unknown;
  messages: Array<{ role: string; content: unknown }>;
  tools?: Array<{ name: string; type?: string; description?: string; input_schema?: unknown; [k: string]: unknown }>;
  [k: string]: unknown;
}

export interface ValidationError {
  status: number;
  type: string;
  message: string;
}

import { checkMedia } from "./media.js";

type Obj = Record<string, unknown>;
type Msg = { role: unknown; content: unknown };
type Block = Obj & { type: string };

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const invalid = (message: string): ValidationError => ({ status: 400, type: "invalid_request_error", message });

/** Blocks of a message's content; a string counts as one text block. */
function blocksOf(m: Msg): Block[] {
  if (typeof m.content === "string") return [{ type: "text", text: m.content }];
  return Array.isArray(m.content) ? (m.content as Block[]) : [];
}

/** Parse the raw body, then validate it. Returns the parsed body when valid. */
export function parseAndValidate(raw: string): { body: unknown; error: ValidationError | null } {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return { body: { raw }, error: invalid("There was an error parsing the body of your request") };
  }
  return { body, error: validateRequest(body) };
}

/** Validate an already-parsed body. Pure: null when valid. */
export function validateRequest(body: unknown): ValidationError | null {
  if (!isObj(body)) return invalid("There was an error parsing the body of your request");
  // Not an API rule: the HTTP fake checks `stream` itself (server.ts) and streams; the simulation models, which never stream, still refuse it here.
  if (body.stream === true) return invalid("fake: streaming is not supported by this fake");
  const msg = checkTopLevel(body) ?? checkMessages(body.messages as Msg[]) ?? checkTools(body.tools) ?? checkSystem(body.system);
  return msg === null ? null : invalid(msg);
}

function checkTopLevel(b: Obj): string | null {
  if (typeof b.model !== "string" || b.model === "") return "model: Field required";
  if (b.max_tokens === undefined || b.max_tokens === null) return "max_tokens: Field required";
  if (typeof b.max_tokens !== "number" || !Number.isInteger(b.max_tokens)) return "max_tokens: Input should be a valid integer";
  if (b.max_tokens < 1) return "max_tokens: Input should be greater than or equal to 1";
  if (!Array.isArray(b.messages) || b.messages.length === 0) return "messages: at least one message is required";
  return null;
}

function checkMessages(msgs: Msg[]): string | null {
  const passes = [
    checkRoles,
    checkContentShape,
    checkTextBlocks,
    checkToolPlacement,
    checkUniqueToolUseIds,
    checkToolUsesAnswered,
    checkToolResultsExpected,
    checkSingleResult,
    checkToolResultsFirst,
    checkToolResultContent,
    checkServerToolBlocks,
    checkMedia,
  ];
  for (const pass of passes) {
    const err = pass(msgs);
    if (err) return err;
  }
  return null;
}

/** Calls fn for every content block (strings count as one text block); stops at the first error. */
function eachBlock(msgs: Msg[], fn: (b: Block, at: string, m: Msg, n: number, i: number) => string | null): string | null {
  for (const [n, m] of msgs.entries()) {
    for (const [i, b] of blocksOf(m).entries()) {
      const err = fn(b, `messages.${n}.content.${i}`, m, n, i);
      if (err) return err;
    }
  }
  return null;
}

// Rules 4 and 5.
function checkRoles(msgs: Msg[]): string | null {
  if (!isObj(msgs[0]) || msgs[0].role !== "user") return 'messages: first message must use the "user" role';
  for (const [n, m] of msgs.entries()) {
    if (!isObj(m) || (m.role !== "user" && m.role !== "assistant")) return `messages.${n}.role: Input should be 'user' or 'assistant'`;
  }
  return null;
}

// Rule 6, plus basic block shape (every block is an object with a string `type`).
function checkContentShape(msgs: Msg[]): string | null {
  for (const [n, { content, role }] of msgs.entries()) {
    if (typeof content !== "string" && !Array.isArray(content)) return `messages.${n}.content: Input should be a valid list`;
    // The API allows an empty final assistant message (a prefill to continue from).
    const exempt = n === msgs.length - 1 && role === "assistant";
    if (content.length === 0 && !exempt) {
      return `messages.${n}: all messages must have non-empty content except for the optional final assistant message`;
    }
    if (Array.isArray(content)) {
      for (const [i, b] of content.entries()) {
        if (!isObj(b) || typeof b.type !== "string") return `messages.${n}.content.${i}.type: Field required`;
      }
    }
  }
  return null;
}

// Rule 7.
function checkTextBlocks(msgs: Msg[]): string | null {
  return eachBlock(msgs, (b, at, m, n) => {
    if (b.type !== "text") return null;
    if (typeof m.content === "string") {
      // Empty strings were handled by rule 6; whitespace-only is still an error (but not for a final prefill).
      const exempt = n === msgs.length - 1 && m.role === "assistant";
      return !exempt && m.content.trim() === "" ? "messages: text content blocks must contain non-whitespace text" : null;
    }
    if (typeof b.text !== "string") return `${at}.text: Field required`;
    if (b.text === "") return `${at}.text: text content blocks must be non-empty`;
    if (b.text.trim() === "") return "messages: text content blocks must contain non-whitespace text";
    return null;
  });
}

// Rule 8, plus the required fields of tool_use / tool_result blocks.
function checkToolPlacement(msgs: Msg[]): string | null {
  return eachBlock(msgs, (b, at, m) => {
    if (b.type === "tool_use") {
      if (m.role !== "assistant") return `${at}: tool_use blocks can only be in assistant messages`;
      if (typeof b.id !== "string" || b.id === "") return `${at}.id: Field required`;
      if (typeof b.name !== "string" || b.name === "") return `${at}.name: Field required`;
      if (!isObj(b.input)) return `${at}.input: Input should be a valid dictionary`;
    } else if (b.type === "tool_result") {
      if (m.role !== "user") return `${at}: tool_result blocks can only be in user messages`;
      if (typeof b.tool_use_id !== "string" || b.tool_use_id === "") return `${at}.tool_use_id: Field required`;
    }
    return null;
  });
}

function toolUseIds(m: Msg | undefined): string[] {
  if (!m || m.role !== "assistant") return [];
  return blocksOf(m)
    .filter((b) => b.type === "tool_use")
    .map((b) => b.id as string);
}

function toolResultIds(m: Msg | undefined): string[] {
  if (!m || m.role !== "user") return [];
  return blocksOf(m)
    .filter((b) => b.type === "tool_result")
    .map((b) => b.tool_use_id as string);
}

// Rule 9.
function checkUniqueToolUseIds(msgs: Msg[]): string | null {
  const seen = new Set<string>();
  return eachBlock(msgs, (b, at) => {
    if (b.type !== "tool_use") return null;
    if (seen.has(b.id as string)) return `${at}: \`tool_use\` ids must be unique`;
    seen.add(b.id as string);
    return null;
  });
}

// Rule 10. A trailing assistant tool_use with nothing after it is an error too.
function checkToolUsesAnswered(msgs: Msg[]): string | null {
  for (const [n, m] of msgs.entries()) {
    const answered = new Set(toolResultIds(msgs[n + 1]));
    const missing = toolUseIds(m).filter((id) => !answered.has(id));
    if (missing.length > 0) {
      return `messages.${n}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
  }
  return null;
}

// Rule 11.
function checkToolResultsExpected(msgs: Msg[]): string | null {
  return eachBlock(msgs, (b, at, _m, n) => {
    if (b.type !== "tool_result" || toolUseIds(msgs[n - 1]).includes(b.tool_use_id as string)) return null;
    return `${at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id as string}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
  });
}

// Rule 12.
function checkSingleResult(msgs: Msg[]): string | null {
  const seen = new Map<number, Set<string>>(); // per message
  return eachBlock(msgs, (b, at, _m, n) => {
    if (b.type !== "tool_result") return null;
    const ids = seen.get(n) ?? new Set<string>();
    seen.set(n, ids);
    const id = b.tool_use_id as string;
    if (ids.has(id)) return `${at}: each \`tool_use\` must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`;
    ids.add(id);
    return null;
  });
}

// Rule 13.
function checkToolResultsFirst(msgs: Msg[]): string | null {
  for (const [n, m] of msgs.entries()) {
    const types = blocksOf(m).map((b) => b.type);
    const firstOther = types.findIndex((t) => t !== "tool_result");
    if (firstOther >= 0 && types.lastIndexOf("tool_result") > firstOther) {
      return `messages.${n}: \`tool_result\` blocks must come first in the user message content, before any other blocks`;
    }
  }
  return null;
}

const TOOL_RESULT_BLOCK_TYPES = ["text", "image", "document", "search_result"];

// Rule 14. An empty string is allowed (a tool may legitimately print nothing).
function checkToolResultContent(msgs: Msg[]): string | null {
  return eachBlock(msgs, (b, at) => {
    if (b.type !== "tool_result") return null;
    if (b.is_error !== undefined && typeof b.is_error !== "boolean") return `${at}.is_error: Input should be a valid boolean`;
    if (b.content === undefined || typeof b.content === "string") return null;
    if (!Array.isArray(b.content)) return `${at}.content: Input should be a valid list`;
    for (const [k, c] of (b.content as unknown[]).entries()) {
      if (!isObj(c) || typeof c.type !== "string") return `${at}.content.${k}.type: Field required`;
      if (!TOOL_RESULT_BLOCK_TYPES.includes(c.type)) {
        return `${at}.content.${k}.type: Input tag '${c.type}' found using 'type' does not match any of the expected tags: ${TOOL_RESULT_BLOCK_TYPES.map((t) => `'${t}'`).join(", ")}`;
      }
      if (c.type !== "text") continue;
      if (typeof c.text !== "string") return `${at}.content.${k}.text: Field required`;
      if (c.text === "") return `${at}.content.${k}.text: text content blocks must be non-empty`;
      if (c.text.trim() === "") return "messages: text content blocks must contain non-whitespace text";
    }
    return null;
  });
}

const SERVER_TOOL_ID = /^srvtoolu_[a-zA-Z0-9_]+$/;

// The web search tool's blocks (its reference page and the SDK's *BlockParam types): only in assistant messages, the
// call's id as the API makes them, and each result answering a server_tool_use earlier in the same message.
// The wording is the fake's own: the API's messages for these cases are not documented.
function checkServerToolBlocks(msgs: Msg[]): string | null {
  const calls = new Map<number, Set<string>>();
  return eachBlock(msgs, (b, at, m, n) => {
    if (b.type !== "server_tool_use" && b.type !== "web_search_tool_result") return null;
    if (m.role !== "assistant") return `${at}: ${b.type} blocks can only be in assistant messages`;
    const seen = calls.get(n) ?? new Set<string>();
    calls.set(n, seen);
    if (b.type === "server_tool_use") {
      if (typeof b.id !== "string" || !SERVER_TOOL_ID.test(b.id)) return `${at}.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'`;
      if (b.name !== "web_search") return `${at}.name: Input should be 'web_search'`;
      if (!isObj(b.input)) return `${at}.input: Input should be a valid dictionary`;
      seen.add(b.id);
      return null;
    }
    if (typeof b.tool_use_id !== "string" || !seen.has(b.tool_use_id)) {
      return `${at}: web_search_tool_result block(s) provided without a matching server_tool_use block before it: ${String(b.tool_use_id)}`;
    }
    return checkSearchContent(b.content, `${at}.content`);
  });
}

function checkSearchContent(content: unknown, at: string): string | null {
  if (isObj(content)) {
    return content.type === "web_search_tool_result_error" && typeof content.error_code === "string"
      ? null
      : `${at}.type: Input should be 'web_search_tool_result_error'`;
  }
  if (!Array.isArray(content)) return `${at}: Input should be a valid list`;
  for (const [k, r] of (content as unknown[]).entries()) {
    if (!isObj(r) || r.type !== "web_search_result") return `${at}.${k}.type: Input should be 'web_search_result'`;
    for (const field of ["url", "title", "encrypted_content"]) if (typeof r[field] !== "string") return `${at}.${k}.${field}: Field required`;
  }
  return null;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
const SEARCH_TOOL_TYPES = ["web_search_20250305", "web_search_20260209"];

// Rule 15.
function checkTools(tools: unknown): string | null {
  if (tools === undefined) return null;
  if (!Array.isArray(tools)) return "tools: Input should be a valid list";
  const names = new Set<string>();
  for (const [k, t] of (tools as unknown[]).entries()) {
    if (!isObj(t)) return `tools.${k}: Input should be a valid dictionary`;
    if (typeof t.name !== "string" || !TOOL_NAME.test(t.name)) return `tools.${k}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
    if (names.has(t.name)) return "tools: Tool names must be unique.";
    names.add(t.name);
    // Server tools (e.g. type "web_search_20250305") carry no input_schema.
    const custom = t.type === undefined || t.type === "custom";
    if (typeof t.type === "string" && t.type.startsWith("web_search_")) {
      if (!SEARCH_TOOL_TYPES.includes(t.type)) return `tools.${k}.type: Input tag '${t.type}' found using 'type' does not match any of the expected tags`;
      if (t.name !== "web_search") return `tools.${k}.name: Input should be 'web_search'`;
      if (t.max_uses !== undefined && (!Number.isInteger(t.max_uses) || (t.max_uses as number) < 1)) return `tools.${k}.max_uses: Input should be greater than 0`;
      if (t.allowed_domains !== undefined && t.blocked_domains !== undefined) return `tools.${k}: Cannot specify both allowed_domains and blocked_domains`;
    }
    if (custom && (!isObj(t.input_schema) || t.input_schema.type !== "object")) return `tools.${k}.input_schema.type: Input should be 'object'`;
  }
  return null;
}

// Rule 16.
function checkSystem(system: unknown): string | null {
  if (system === undefined || typeof system === "string") return null;
  if (!Array.isArray(system)) return "system: Input should be a valid string";
  for (const [k, b] of (system as unknown[]).entries()) {
    if (!isObj(b) || b.type !== "text") return `system.${k}.type: Input should be 'text'`;
    if (typeof b.text !== "string" || b.text === "") return `system.${k}.text: text content blocks must be non-empty`;
  }
  return null;
}
