import type { MemoryRecord, Store } from "../store/store.js";

// /memory and /forget: the user's own view of what the bot remembers about them. Always the sender's memories
// (their whole identity, e.g. `telegram:4242`), whoever owns the chat or its running task. Numbers are positions
// in `store.memories(userId)` (oldest first), read afresh for each command, so "/forget 2" means the second line
// of a /memory sent now.

const NOTHING = "I don't remember anything about you yet.";
/** A memory is one fact; a line in the list stays readable even when the extraction wrote a long one. */
const MAX_LINE = 300;

export async function memoryText(store: Pick<Store, "memories">, userId: string): Promise<string> {
  const memories = await store.memories.list(userId);
  if (memories.length === 0) return NOTHING;
  const lines = memories.map((m, i) => `${i + 1}. ${oneLine(m.text)}`);
  const footer =
    memories.length === 1 ? "To make me forget it, send /forget 1." : "To make me forget one, send its number, e.g. /forget 2; /forget all forgets everything.";
  return [`Here is what I remember about you (${count(memories.length)}):`, ...lines, "", footer].join("\n");
}

/** `/forget <n>` or `/forget all`; `text` is the whole command as the user sent it. */
export async function forgetText(store: Pick<Store, "memories">, userId: string, text: string): Promise<string> {
  const args = text.trim().split(/\s+/).slice(1);
  const arg = (args[0] ?? "").replace(/^#/, "");
  if (args.length === 1 && arg.toLowerCase() === "all") {
    const deleted = await store.memories.delete(userId);
    return deleted === 0 ? `${NOTHING} There is nothing to forget.` : `Done: I forgot everything I remembered about you (${count(deleted)}).`;
  }
  const memories = await store.memories.list(userId);
  if (memories.length === 0) return `${NOTHING} There is nothing to forget.`;
  if (args.length === 0) return `Which one? ${usage(memories)}`;
  const n = args.length === 1 && /^[0-9]{1,9}$/.test(arg) ? Number(arg) : NaN;
  if (!Number.isInteger(n)) return `I can't tell which memory "${clip(args.join(" "), 40)}" is. ${usage(memories)}`;
  const target = memories[n - 1];
  if (n < 1 || !target) return `There is no memory ${n}. ${usage(memories)}`;
  const deleted = await store.memories.delete(userId, [target.id]);
  // Gone already: a /forget all or a newer fact replaced it between the read and the delete.
  if (deleted === 0) return `Memory ${n} was already gone. Send /memory to see what I remember now.`;
  return `Done: I forgot "${clip(oneLine(target.text), 120)}".`;
}

function usage(memories: MemoryRecord[]): string {
  const range = memories.length === 1 ? "/forget 1" : `/forget followed by a number from 1 to ${memories.length}`;
  return `Send ${range} (as /memory lists them), or /forget all.`;
}

function count(n: number): string {
  return n === 1 ? "1 memory" : `${n} memories`;
}

function oneLine(text: string): string {
  return clip(text.replace(/\s+/g, " ").trim(), MAX_LINE);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
