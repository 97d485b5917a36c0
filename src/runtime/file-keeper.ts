// Files a tool call makes (send_file's content or path, an MCP image): judged like a received file (size, type from
// the bytes, name sanitised, images re-encoded), then staged on the journal, so they are stored by the same step
// commit as the call's result that names them (a crash before it leaves neither). A file sent to the chat is an
// outbox entry staged the same way: delivered once that step committed.
import { publicFileId } from "../files/ids.js";
import { acceptFile, type RawFile } from "../files/intake.js";
import { DEFAULT_FILE_LIMITS, sessionFullReason } from "../files/limits.js";
import type { FileRefBlock } from "../llm/types.js";
import type { NewAgentFile } from "../store/store.js";
import type { TurnDeps } from "./executor.js";
import type { StackFrame } from "./frame.js";

export type KeptFile = { ok: true; file: FileRefBlock } | { ok: false; reason: string };

export interface FileKeeper {
  /** Judges `raw` and stages it for this step's commit; the reference, or the sentence saying why it was not kept. */
  keepFile(raw: RawFile): Promise<KeptFile>;
  /** Sends a file of this conversation (kept in this step or stored before) to the chat after this step commits. */
  sendFile(file: FileRefBlock, caption?: string): void;
}

export function fileKeeper(frame: StackFrame, deps: Pick<TurnDeps, "journal" | "store" | "settings" | "ids" | "owner" | "depth">): FileKeeper {
  const limits = deps.settings.files ?? DEFAULT_FILE_LIMITS;
  const { journal } = deps;
  return {
    async keepFile(raw) {
      const owner = deps.owner;
      if (owner === undefined) return { ok: false, reason: "files can be made only inside a task (this call has no task owner)" };
      const judged = await acceptFile(raw, limits);
      if (!judged.ok) return { ok: false, reason: judged.reason };
      if (limits.maxSessionBytes > 0) {
        const staged = journal.stagedFiles().reduce((sum, f) => sum + f.size, 0);
        const held = await deps.store.files.sessionBytes(journal.sessionKey);
        if (held + staged + judged.size > limits.maxSessionBytes) return { ok: false, reason: sessionFullReason(judged.name, limits.maxSessionBytes) };
      }
      const file: NewAgentFile = {
        id: deps.ids.next("file"),
        publicId: publicFileId(),
        sha256: judged.sha256,
        name: judged.name,
        mime: judged.mime,
        kind: judged.kind,
        size: judged.size,
        voice: false,
        bytes: judged.bytes,
        ownerId: owner,
      };
      journal.stage({ files: [file] });
      return { ok: true, file: { type: "file", file_id: file.id, name: file.name, mime: file.mime, kind: file.kind, size: file.size } };
    },
    sendFile(file, caption) {
      journal.stage({
        outbound: [
          {
            id: deps.ids.next("out"),
            requestId: journal.requestId,
            taskId: journal.taskId,
            agent: frame.agentName,
            depth: deps.depth ?? 1,
            text: caption ?? "",
            kind: "message",
            fileId: file.file_id,
          },
        ],
      });
    },
  };
}
