// Received files in the session's workspace (WORKSPACE=on): when a message's turn starts, under the session's lease,
// each of its files is put in the workspace's top folder and the agent is told the path (or why it is not there).
// Placing at the turn's start, not when the message is accepted: the inbox stores a message without the session's
// lease, and the workspace is saved only under it (docs/engineering/decisions/workspace-persistence.md).
import type { Logger } from "pino";
import type { FileRefBlock } from "../llm/types.js";
import type { SessionWriter, Store } from "../store/store.js";

/** Where a file went in the workspace, or why it could not go there (src/workspace/place.ts). */
export type PlacedFile = { ok: true; path: string } | { ok: false; reason: string };

/** Puts a received file in the session's workspace under a free name, saved under the writer's lease. */
export type PlaceFile = (writer: Pick<SessionWriter, "sessionKey" | "fence">, name: string, bytes: Buffer) => Promise<PlacedFile>;

export interface ReceivedFileDeps {
  store: Pick<Store, "files">;
  placeFile?: PlaceFile;
  log: Logger;
}

/**
 * `files` (a message's, as its user message will name them) each placed in the workspace: the refs carry `path`,
 * or `unplaced` saying why. Placing is idempotent (the same bytes under the same name keep their path), so a turn
 * that placed its files and died before its step committed places them at the same paths when it runs again.
 */
export async function placeReceived(deps: ReceivedFileDeps, writer: Pick<SessionWriter, "sessionKey" | "fence">, files: FileRefBlock[]): Promise<FileRefBlock[]> {
  const { placeFile, store, log } = deps;
  if (!placeFile || files.length === 0) return files;
  const out: FileRefBlock[] = [];
  for (const file of files) {
    const stored = await store.files.get(file.file_id);
    const bytes = stored ? await store.files.bytes(stored.sessionKey, stored.sha256) : null;
    if (!bytes) {
      out.push(file);
      continue;
    }
    let placed: PlacedFile;
    try {
      placed = await placeFile(writer, file.name, bytes);
    } catch (error) {
      // A lease lost meanwhile (FencedError) ends the turn at its commit anyway; anything else is the disk's.
      log.warn({ err: error, file: file.file_id }, "a received file could not be put in the workspace");
      placed = { ok: false, reason: "it could not be written to the workspace" };
    }
    out.push(placed.ok ? { ...file, path: placed.path } : { ...file, unplaced: placed.reason });
  }
  return out;
}
