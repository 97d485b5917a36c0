// What the model is shown of the files in a history: the stored files of the newest user messages as image,
// document or text blocks (src/files/blocks.ts), read from the store just before the call; older ones as a line
// naming the file, so a long conversation does not pay for every photo at every call. The history itself (and
// the context log) keeps only FileRefBlocks.
import type { Logger } from "pino";
import { announceFile, modelBlocks } from "../files/blocks.js";
import { describeFile } from "../files/intake.js";
import type { ChatMessage, FileRefBlock, UserBlock } from "../llm/types.js";
import type { Store } from "../store/store.js";

/** The tool that shows an earlier file again (tools/view-file.ts). */
export const VIEW_FILE = "view_file";

/** Whether a history names a stored file (a file block, or a placeholder or summary naming one): view_file is offered. */
export function namesFiles(history: readonly ChatMessage[]): boolean {
  return history.some((m) => m.role === "user" && m.content.some((b) => b.type === "file" || (b.type === "text" && b.text.includes("[Earlier file "))));
}

/** Whether the user's side of a history names file `id` (its block, a placeholder, a compaction summary). */
export function namesFile(history: readonly ChatMessage[], id: string): boolean {
  return history.some((m) => m.role === "user" && m.content.some((b) => (b.type === "file" && b.file_id === id) || (b.type === "text" && b.text.includes(id))));
}

/** Files of this many newest user messages (tool results aside) are shown whole; older ones by name. */
export const FILES_SHOWN_FOR_MESSAGES = 3;

/** Prepared blocks by content (re-encoding an image at every call would be wasted): a small cache per runtime. */
export class FileBlockCache {
  private readonly entries = new Map<string, UserBlock[]>();
  constructor(private readonly max = 32) {}

  async get(key: string, make: () => Promise<UserBlock[]>): Promise<UserBlock[]> {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const blocks = await make();
    this.entries.set(key, blocks);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    return blocks;
  }
}

export interface FileBlockDeps {
  store: Pick<Store, "files">;
  cache: FileBlockCache;
  log: Logger;
  /** Transcripts of voice and audio files, by file id (none without TRANSCRIPTION_URL). */
  transcript?: (file: FileRefBlock) => Promise<string | undefined>;
}

/** `messages` with every FileRefBlock replaced by what the model may read of it. */
export async function showFiles(messages: readonly ChatMessage[], deps: FileBlockDeps): Promise<ChatMessage[]> {
  if (!messages.some((m) => m.role === "user" && m.content.some((b) => b.type === "file"))) return [...messages];
  const shown = newestUserMessages(messages, FILES_SHOWN_FOR_MESSAGES);
  const out: ChatMessage[] = [];
  for (const [i, message] of messages.entries()) {
    if (message.role !== "user" || !message.content.some((b) => b.type === "file")) {
      out.push(message);
      continue;
    }
    const content: UserBlock[] = [];
    for (const block of message.content) {
      if (block.type !== "file") content.push(block);
      else if (shown.has(i)) content.push(...(await fileBlocks(block, deps)));
      else content.push(placeholder(block));
    }
    out.push({ role: "user", content });
  }
  return out;
}

/** The line an older file is shown as (also what compaction keeps of it). */
export function placeholder(file: FileRefBlock): UserBlock {
  return { type: "text", text: `[Earlier file ${file.file_id}: ${announceFile(file)}; no longer shown. Call view_file with this id to see it again.]` };
}

async function fileBlocks(file: FileRefBlock, deps: FileBlockDeps): Promise<UserBlock[]> {
  const stored = await deps.store.files.get(file.file_id);
  if (stored?.expiredAt != null) return [{ type: "text", text: `[File ${expiredNote(file)}]` }];
  const bytes = stored ? await deps.store.files.bytes(stored.sessionKey, stored.sha256) : null;
  if (!stored || !bytes) return [{ type: "text", text: `[File ${describeFile(file)}: it was deleted and cannot be shown.]` }];
  const transcript = file.kind === "audio" || file.kind === "video" ? await deps.transcript?.(file) : undefined;
  return deps.cache.get(`${stored.sha256}:${file.name}:${file.path ?? file.unplaced ?? ""}:${transcript ?? ""}`, async () => {
    try {
      return await modelBlocks(
        {
          name: stored.name,
          mime: stored.mime,
          kind: stored.kind,
          size: stored.size,
          bytes,
          sha256: stored.sha256,
          voice: stored.voice,
          path: file.path,
          unplaced: file.unplaced,
        },
        transcript,
      );
    } catch (error) {
      deps.log.warn({ file: file.file_id, err: error }, "a stored file could not be prepared for the model");
      return [{ type: "text", text: `[File ${describeFile(file)}: it could not be prepared for you.]` }];
    }
  });
}

/** Indexes of the `n` newest user messages that the user wrote (not only tool results). */
function newestUserMessages(messages: readonly ChatMessage[], n: number): Set<number> {
  const found = new Set<number>();
  for (let i = messages.length - 1; i >= 0 && found.size < n; i--) {
    const m = messages[i]!;
    if (m.role === "user" && m.content.some((b) => b.type === "text" || b.type === "file")) found.add(i);
  }
  return found;
}

/** The files a request brought, as the blocks its user message names them by. */
export async function fileRefs(store: Pick<Store, "files">, requestId: string): Promise<FileRefBlock[]> {
  return (await store.files.ofRequest(requestId)).map((f) => ({ type: "file", file_id: f.id, name: f.name, mime: f.mime, kind: f.kind, size: f.size }));
}

/** A stored file as a history names it, and when the retention deleted its bytes (absent while they are kept). */
export type SessionFileRef = FileRefBlock & { expiredAt?: number };

/** A stored file of `sessionKey` as a history names it; null when it belongs to another conversation or is gone. */
export async function sessionFile(store: Pick<Store, "files">, sessionKey: string, fileId: string): Promise<SessionFileRef | null> {
  const f = await store.files.get(fileId);
  if (!f || f.sessionKey !== sessionKey) return null;
  return { type: "file", file_id: f.id, name: f.name, mime: f.mime, kind: f.kind, size: f.size, ...(f.expiredAt !== null ? { expiredAt: f.expiredAt } : {}) };
}

/** What the agent is told of a file whose bytes the retention deleted. */
export function expiredNote(file: { name: string; mime: string; size: number }): string {
  return `${describeFile(file)} has expired: this gateway keeps files for a limited time (FILE_RETENTION_DAYS) and its contents were deleted. Ask the user to send it again if it is still needed.`;
}
