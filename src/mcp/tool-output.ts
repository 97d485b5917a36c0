import type { KeptFile } from "../runtime/file-keeper.js";
import type { FileRefBlock } from "../llm/types.js";
import type { RawFile } from "../files/intake.js";
import { describeFile } from "../files/intake.js";
import type { ToolOutput } from "../runtime/tools/tool.js";
import { base64Bytes, size, type McpResult } from "./result.js";

/** Keeps a file the call made as a file of the conversation (ToolContext.keepFile). */
export type KeepFile = (raw: RawFile) => Promise<KeptFile>;

const EXT: Record<string, string> = { "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp" };

/**
 * What the model gets for an MCP result. An image is kept as a file of the conversation (judged like a received
 * one: its type from the bytes, its pixels bounded, re-encoded) and shown to the model as an image block after the
 * result, which names it in a line; one that cannot be kept is a line saying why. Without `keep` (no conversation
 * to keep it in) an image is only announced ("[image: image/png, 1.2 KB]").
 */
export async function toToolOutput(result: McpResult, keep?: KeepFile, imageName = "image"): Promise<ToolOutput> {
  const files: FileRefBlock[] = [];
  const parts: string[] = [];
  for (const block of result.blocks) {
    switch (block.type) {
      case "text":
        parts.push(block.text);
        break;
      case "image": {
        if (!keep) {
          parts.push(`[image: ${block.mediaType}, ${size(base64Bytes(block.data))}]`);
          break;
        }
        const name = `${imageName}${files.length > 0 ? `-${files.length + 1}` : ""}.${EXT[block.mediaType] ?? "img"}`;
        const kept = await keep({ name, bytes: Buffer.from(block.data, "base64"), declaredMime: block.mediaType });
        if (kept.ok) {
          files.push(kept.file);
          parts.push(`[image: ${describeFile(kept.file)}, file id ${kept.file.file_id}; shown to you after this result]`);
        } else parts.push(`[image not shown: ${kept.reason}]`);
        break;
      }
      case "resource": {
        const about = [block.name, block.mimeType].filter(Boolean).join(", ");
        const head = `[${block.link ? "resource link" : "resource"}: ${block.uri}${about ? ` (${about})` : ""}${block.description ? ` ${block.description}` : ""}`;
        if (block.text !== null) parts.push(`${head}]\n${block.text}`);
        else parts.push(block.bytes !== null ? `${head}, ${size(block.bytes)} of binary content, not shown]` : `${head}]`);
        break;
      }
    }
  }
  const content = parts.join("\n");
  return { content: content === "" ? "(the tool returned no content)" : content, ...(result.isError ? { isError: true } : {}), ...(files.length ? { files } : {}) };
}
