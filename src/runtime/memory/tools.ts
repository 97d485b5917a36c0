import type { Ids } from "../deps.js";
import type { MemoryRecord, Store } from "../../store/store.js";
import type { Tool, ToolContext, ToolOutput } from "../tools/tool.js";
import { holdsSecret } from "./secrets.js";

export const MEMORY_TOOLS = ["remember", "recall", "forget"] as const;
const MAX_TEXT = 500;

const fail = (content: string): ToolOutput => ({ content, isError: true });
const listed = (memories: readonly MemoryRecord[]) => memories.map((m) => `[${m.id}] ${m.text}`).join("\n");
const text = (input: Record<string, unknown>, key: string) => (typeof input[key] === "string" ? (input[key] as string).trim() : "");

/** The task owner's identity: memories are theirs alone (in a group, the one who started the task). */
function ownerOf(ctx: ToolContext): string | null {
  return ctx.owner ?? null;
}

/**
 * The main agent's memory tools, for what the user says in plain words: "remember that…", "what do you know
 * about my trip?", "forget my address". They act on the task owner's memories only.
 */
export function memoryTools(storeOf: () => Store, ids: Ids): Tool[] {
  const remember: Tool = {
    spec: {
      name: "remember",
      description:
        "Keep a durable fact about the user for later conversations (their name, a preference, an ongoing project), when they ask you to remember something. One short self-contained sentence. Never passwords, tokens or card numbers.",
      input_schema: { type: "object", properties: { text: { type: "string", description: 'The fact, e.g. "Prefers window seats."' } }, required: ["text"] },
    },
    idempotent: false,
    run: async (input, ctx) => {
      const store = storeOf();
      const owner = ownerOf(ctx);
      const fact = text(input, "text");
      if (!owner) return fail("remember is not available here (no user to remember it for)");
      if (!fact) return fail("text must be a non-empty string");
      if (fact.length > MAX_TEXT) return fail(`text is ${fact.length} characters; keep a memory under ${MAX_TEXT}`);
      if (holdsSecret(fact)) return fail("not stored: it looks like a password, token, key or card number, which are never kept");
      const existing = await store.memories.list(owner);
      const same = existing.find((m) => normal(m.text) === normal(fact));
      if (same) return { content: `already remembered [${same.id}]` };
      const id = ids.next("mem");
      await store.memories.save(owner, { add: [{ id, text: fact, kind: "told" }] });
      return { content: `remembered [${id}]` };
    },
  };
  const recall: Tool = {
    spec: {
      name: "recall",
      description: "Search what you remember about the user (their earlier conversations) for a topic. Returns matching memories with their ids.",
      input_schema: { type: "object", properties: { query: { type: "string", description: "Words to look for; empty for the most recent." } }, required: ["query"] },
    },
    idempotent: true,
    run: async (input, ctx) => {
      const store = storeOf();
      const owner = ownerOf(ctx);
      if (!owner) return fail("recall is not available here");
      const found = await store.memories.search(owner, text(input, "query"), 10);
      return { content: found.length ? listed(found) : "nothing remembered about that" };
    },
  };
  const forget: Tool = {
    spec: {
      name: "forget",
      description:
        'Delete memories about the user when they ask you to forget something: give a memory id from recall (e.g. "mem_…"), or words describing it ("my address"); the best matches (up to 3) are deleted.',
      input_schema: { type: "object", properties: { query: { type: "string", description: "A memory id, or what to forget." } }, required: ["query"] },
    },
    idempotent: true,
    run: async (input, ctx) => {
      const store = storeOf();
      const owner = ownerOf(ctx);
      const query = text(input, "query");
      if (!owner) return fail("forget is not available here");
      if (!query) return fail("query must name a memory id or what to forget");
      const mine = await store.memories.list(owner);
      const byId = mine.filter((m) => m.id === query || `[${m.id}]` === query);
      const targets = byId.length > 0 ? byId : (await store.memories.search(owner, query, 3)).filter((m) => sharesAWord(m.text, query));
      if (targets.length === 0) return { content: "nothing remembered matches that; nothing was deleted" };
      await store.memories.delete(
        owner,
        targets.map((m) => m.id),
      );
      return { content: `forgot:\n${listed(targets)}` };
    },
  };
  return [remember, recall, forget];
}

function normal(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** A search that found nothing falls back to the most recent memories; forgetting needs a real match. */
function sharesAWord(memory: string, query: string): boolean {
  const words = new Set(
    normal(memory)
      .split(" ")
      .filter((w) => w.length > 2),
  );
  return normal(query)
    .split(" ")
    .some((w) => w.length > 2 && [...words].some((m) => m.startsWith(w.slice(0, Math.max(3, w.length - 2)))));
}
