import type { ChatMessage, ToolDefinition } from "./types.js";

/** What one image costs the model: about (width × height) / 750 tokens, and images are read at ~1.15 megapixels. */
export const IMAGE_TOKENS = 1_600;
/** What one PDF page costs: its text plus the page read as an image (the API's docs give 1,500-3,000). */
export const PDF_PAGE_TOKENS = 3_000;

/**
 * A local token estimate: about four characters of JSON per token. It errs a little low for plain English;
 * callers compare it with the usage the API reports and keep the larger. Images and PDFs count what the model
 * reads of them, not the length of their base64.
 */
export function estimateTokens(value: unknown): number {
  if (typeof value === "string") return Math.ceil(value.length / 4);
  const { chars, media } = measure(value);
  return Math.ceil(chars / 4) + media;
}

/** The JSON length of `value` with media blocks as their `type` alone, and what those media cost the model. */
function measure(value: unknown): { chars: number; media: number } {
  let media = 0;
  const json = JSON.stringify(value, (_key, v: unknown) => {
    const tokens = mediaTokens(v);
    if (tokens === null) return v;
    media += tokens;
    return { type: (v as { type: string }).type };
  });
  return { chars: json?.length ?? 0, media };
}

/** What each tool definition measures: the registry hands out the same objects on every call, and they never change. */
const measuredTools = new WeakMap<ToolDefinition, { chars: number; media: number }>();

/**
 * `estimateTokens(tools)`, to the token, without serialising each definition again: a frame's tools are estimated
 * before every model call, and they are the same objects every time.
 */
export function estimateToolTokens(tools: readonly ToolDefinition[]): number {
  // `[` and `]`, and a comma between two definitions.
  let chars = tools.length === 0 ? 2 : tools.length + 1;
  let media = 0;
  for (const tool of tools) {
    let known = measuredTools.get(tool);
    if (!known) measuredTools.set(tool, (known = measure(tool)));
    chars += known.chars;
    media += known.media;
  }
  return Math.ceil(chars / 4) + media;
}

export function estimateRequest(request: { system: string; volatileSystem?: string; messages: ChatMessage[]; tools: ToolDefinition[] }): number {
  return estimateTokens(request.system) + estimateTokens(request.volatileSystem ?? "") + estimateTokens(request.messages) + estimateToolTokens(request.tools);
}

/** The pages of a PDF, counted from its page objects (an estimate: a PDF that hides them in object streams counts by size). */
export function pdfPagesOf(bytes: Buffer): number {
  const pages = bytes.toString("latin1").match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length ?? 0;
  return pages > 0 ? pages : Math.max(1, Math.ceil(bytes.length / 100_000));
}

/** Tokens of an image or document block; null for anything else. */
function mediaTokens(value: unknown): number | null {
  if (typeof value !== "object" || value === null) return null;
  const block = value as { type?: unknown; source?: { type?: unknown; data?: unknown }; title?: unknown };
  if (block.type === "image" && block.source) return IMAGE_TOKENS;
  if (block.type === "file") return fileRefTokens(value as { kind?: unknown; size?: unknown });
  if (block.type !== "document" || !block.source || typeof block.source.data !== "string") return null;
  const title = typeof block.title === "string" ? block.title.length : 0;
  if (block.source.type === "text") return Math.ceil((block.source.data.length + title) / 4);
  return pdfPagesOf(Buffer.from(block.source.data, "base64")) * PDF_PAGE_TOKENS;
}

/** What a stored file will cost once shown (before it is read back): an image, a PDF by its size, text by its length. */
function fileRefTokens(file: { kind?: unknown; size?: unknown }): number {
  const size = typeof file.size === "number" ? file.size : 0;
  if (file.kind === "image") return IMAGE_TOKENS;
  if (file.kind === "pdf") return Math.max(1, Math.ceil(size / 100_000)) * PDF_PAGE_TOKENS;
  if (file.kind === "text") return Math.ceil(size / 4);
  return 50;
}
