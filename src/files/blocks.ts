import type { ImageMediaType, UserBlock } from "../llm/types.js";
import { MODEL_IMAGE_TYPES } from "./detect.js";
import { imageForModel } from "./image.js";
import { describeFile } from "./intake.js";
import { takeModelCopy } from "./model-copies.js";
import { inspectPdf } from "./pdf.js";
import { fileText } from "./text.js";
import type { ReceivedFile } from "./types.js";

// What the model is shown of a file: an image block, a PDF document block, a text document block titled with the
// file's name, or (other types, and files the model cannot take) a line naming the file, its type and its size.
// Each file is introduced by a line with its name, so the agent can refer to it (and send it back).

/** Where a received file is in the session's workspace, or why it is not there (see FileRefBlock). */
export interface WorkspacePlace {
  path?: string | undefined;
  unplaced?: string | undefined;
}

/** A file as the agent is told of it: name, type and size, and its place in the workspace (or why it has none). */
export function announceFile(file: { name: string; mime: string; size: number } & WorkspacePlace): string {
  const where = file.path ? `, in the workspace at ${file.path}` : file.unplaced ? `; not in the workspace: ${file.unplaced}` : "";
  return `${describeFile(file)}${where}`;
}

export async function modelBlocks(
  file: Pick<ReceivedFile, "name" | "mime" | "kind" | "size" | "bytes" | "voice"> & Partial<Pick<ReceivedFile, "sha256">> & WorkspacePlace,
  transcript?: string,
): Promise<UserBlock[]> {
  const named = announceFile(file);
  switch (file.kind) {
    case "image": {
      // The copy the intake made from the same pixels as these bytes, else a second decode.
      const copy = file.sha256 === undefined ? null : takeModelCopy(file.sha256);
      const image = copy ? { ok: true as const, ...copy } : await imageForModel(file.bytes, file.mime);
      if (!image.ok || !(MODEL_IMAGE_TYPES as readonly string[]).includes(image.mime)) return [mention(named, "the image could not be prepared for you")];
      return [
        { type: "text", text: `[Attached image: ${named}]` },
        { type: "image", source: { type: "base64", media_type: image.mime as ImageMediaType, data: image.bytes.toString("base64") } },
      ];
    }
    case "pdf": {
      const pdf = await inspectPdf(file.bytes);
      if (!pdf.ok) return [mention(named, pdf.detail)];
      return [
        { type: "text", text: `[Attached PDF: ${named}, ${pdf.pages} page${pdf.pages === 1 ? "" : "s"}]` },
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: file.bytes.toString("base64") }, title: file.name },
      ];
    }
    case "text": {
      const { text, truncated } = fileText(file.bytes);
      if (text.trim() === "") return [mention(named, "it holds no text")];
      return [
        { type: "text", text: `[Attached file: ${named}${truncated ? "; only its beginning is shown" : ""}]` },
        { type: "document", source: { type: "text", media_type: "text/plain", data: text }, title: file.name },
      ];
    }
    case "audio":
    case "video":
      if (transcript !== undefined) {
        const what = file.voice ? "Voice message" : `Transcript of ${named}`;
        return [{ type: "text", text: `[${what}, transcribed] ${transcript.trim() || "(nothing intelligible was said)"}` }];
      }
      return [mention(named, null)];
    case "other":
      return [mention(named, null)];
    default: {
      const unknown: never = file.kind;
      throw new Error(`unknown file kind ${String(unknown)}`);
    }
  }
}

function mention(named: string, why: string | null): UserBlock {
  return { type: "text", text: `[Attached file: ${named}; its contents are not shown to you${why ? ` (${why})` : ""}. It is stored with the conversation.]` };
}
