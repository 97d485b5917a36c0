import type { ToolOutput } from "../runtime/tools/tool.js";
import { base64Bytes, size, type McpResult } from "./result.js";

/**
 * What the model gets for an MCP result. Tool results carry text only for now, so an image is announced by a line
 * ("[image: image/png, 1.2 KB]"); once tool results take image blocks, this is the one function that changes.
 */
export function toToolOutput(result: McpResult): ToolOutput {
  const parts = result.blocks.map((block) => {
    switch (block.type) {
      case "text":
        return block.text;
      case "image":
        return `[image: ${block.mediaType}, ${size(base64Bytes(block.data))}]`;
      case "resource": {
        const about = [block.name, block.mimeType].filter(Boolean).join(", ");
        const head = `[${block.link ? "resource link" : "resource"}: ${block.uri}${about ? ` (${about})` : ""}${block.description ? ` ${block.description}` : ""}`;
        if (block.text !== null) return `${head}]\n${block.text}`;
        return block.bytes !== null ? `${head}, ${size(block.bytes)} of binary content, not shown]` : `${head}]`;
      }
    }
  });
  const content = parts.join("\n");
  return { content: content === "" ? "(the tool returned no content)" : content, ...(result.isError ? { isError: true } : {}) };
}
