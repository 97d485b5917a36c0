import { z } from "zod";

// A tools/call result as the gateway keeps it: typed blocks (text, image, resource), checked one by one, so that one
// odd block (a content type from a newer protocol, an image whose bytes are not an image) is shown as a note instead
// of failing the whole result, and cut to a byte budget with a note saying so. An MCP server's output is untrusted
// input: nothing here interprets it beyond its shape.

export type McpBlock =
  | { type: "text"; text: string }
  /** `data` is base64 of an image of `mediaType`, checked to be one (the Messages API's image types). */
  | { type: "image"; mediaType: string; data: string }
  /** An embedded resource (its text, or the size of its binary content) or a link to one (`link`). */
  | { type: "resource"; link: boolean; uri: string; mimeType: string | null; name: string | null; description: string | null; text: string | null; bytes: number | null };

export interface McpResult {
  blocks: McpBlock[];
  isError: boolean;
}

const short = z.string().transform((s) => clip(s, 2048));
const TextContent = z.object({ type: z.literal("text"), text: z.string() });
const ImageContent = z.object({ type: z.literal("image"), data: z.string(), mimeType: z.string() });
const AudioContent = z.object({ type: z.literal("audio"), data: z.string(), mimeType: short });
const ResourceLink = z.object({ type: z.literal("resource_link"), uri: short, name: short.optional(), mimeType: short.optional(), description: short.optional() });
const EmbeddedResource = z.object({
  type: z.literal("resource"),
  resource: z.union([z.object({ uri: short, mimeType: short.optional(), text: z.string() }), z.object({ uri: short, mimeType: short.optional(), blob: z.string() })]),
});
/** The envelope only; each content block is read on its own. */
export const RawCallResult = z.looseObject({
  content: z.array(z.unknown()).optional(),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
});
export type RawCallResult = z.output<typeof RawCallResult>;

const IMAGE_TYPES: Record<string, (bytes: Buffer) => boolean> = {
  "image/png": (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  "image/jpeg": (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  "image/gif": (b) => b.subarray(0, 4).toString("latin1") === "GIF8",
  "image/webp": (b) => b.subarray(0, 4).toString("latin1") === "RIFF" && b.subarray(8, 12).toString("latin1") === "WEBP",
};
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Reads a result's blocks; see `bound` for the size limit. */
export function readResult(raw: RawCallResult): McpResult {
  const blocks: McpBlock[] = (raw.content ?? []).map(readBlock);
  const structured = raw.structuredContent;
  // structuredContent is for programs; the content is what a model reads (servers are asked to repeat the JSON
  // there, and some give a text of their own instead). So the JSON is shown only when no text is given.
  if (structured !== undefined && !blocks.some((b) => b.type === "text")) {
    blocks.push({ type: "text", text: JSON.stringify(structured) });
  }
  return { blocks, isError: raw.isError === true };
}

function readBlock(block: unknown): McpBlock {
  const type = typeof block === "object" && block !== null && "type" in block ? String((block as { type: unknown }).type) : null;
  const note = (text: string): McpBlock => ({ type: "text", text: `[${text}]` });
  switch (type) {
    case "text": {
      const b = TextContent.safeParse(block);
      return b.success ? b.data : note("a text block without text");
    }
    case "image": {
      const b = ImageContent.safeParse(block);
      if (!b.success) return note("an image block without data or mimeType, not shown");
      const problem = imageProblem(b.data.mimeType, b.data.data);
      return problem ? note(`image not shown: ${problem}`) : { type: "image", mediaType: b.data.mimeType, data: b.data.data };
    }
    case "audio": {
      const b = AudioContent.safeParse(block);
      return note(
        b.success ? `audio (${b.data.mimeType}, ${size(base64Bytes(b.data.data))}) not shown: the model cannot listen to it here` : "an audio block, not shown",
      );
    }
    case "resource_link": {
      const b = ResourceLink.safeParse(block);
      if (!b.success) return note("a resource link without a uri");
      const { uri, name, mimeType, description } = b.data;
      return { type: "resource", link: true, uri, name: name ?? null, mimeType: mimeType ?? null, description: description ?? null, text: null, bytes: null };
    }
    case "resource": {
      const b = EmbeddedResource.safeParse(block);
      if (!b.success) return note("an embedded resource without a uri and text or blob");
      const r = b.data.resource;
      const text = "text" in r ? r.text : null;
      return {
        type: "resource",
        link: false,
        uri: r.uri,
        name: null,
        mimeType: r.mimeType ?? null,
        description: null,
        text,
        bytes: "blob" in r ? base64Bytes(r.blob) : null,
      };
    }
    default:
      return note(`a content block of type ${JSON.stringify(clip(type ?? "(none)", 40))}, which this gateway does not read`);
  }
}

/** Why `data` is not an image of `mediaType`, or null when it is. */
function imageProblem(mediaType: string, data: string): string | null {
  const check = Object.hasOwn(IMAGE_TYPES, mediaType) ? IMAGE_TYPES[mediaType]! : null;
  if (!check) return `${JSON.stringify(clip(mediaType, 60))} is not an image type the model reads (PNG, JPEG, GIF, WebP)`;
  if (data.length === 0 || data.length % 4 !== 0 || !BASE64.test(data)) return `the data is not base64`;
  if (!check(Buffer.from(data.slice(0, 24), "base64"))) return `the data is not a ${mediaType} image`;
  return null;
}

/**
 * The result within `maxBytes` (text as UTF-8, images and blobs as their base64): blocks past the budget are left
 * out, a text block across it is cut, and a note at the end says what happened.
 */
export function bound(result: McpResult, maxBytes: number): McpResult {
  const sizes = result.blocks.map(blockBytes);
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total <= maxBytes) return result;
  const blocks: McpBlock[] = [];
  let left = maxBytes;
  for (const [i, block] of result.blocks.entries()) {
    if (sizes[i]! <= left) {
      blocks.push(block);
      left -= sizes[i]!;
    } else if (block.type === "text" && left > 0) {
      blocks.push({ type: "text", text: cutUtf8(block.text, left) });
      left = 0;
    } else if (block.type === "resource" && block.text !== null && left > 0) {
      blocks.push({ ...block, text: cutUtf8(block.text, left) });
      left = 0;
    }
  }
  const omitted = result.blocks.length - blocks.length;
  blocks.push({
    type: "text",
    text: `[the result was cut: it was ${size(total)}, more than the ${size(maxBytes)} a tool result may have here (MCP_MAX_RESULT_BYTES)${omitted ? `; ${omitted} of its ${result.blocks.length} blocks are not shown` : ""}. Ask the tool for less, e.g. a smaller range or page.]`,
  });
  return { blocks, isError: result.isError };
}

function blockBytes(block: McpBlock): number {
  switch (block.type) {
    case "text":
      return Buffer.byteLength(block.text);
    case "image":
      return block.data.length;
    case "resource":
      return Buffer.byteLength(block.uri) + (block.text === null ? 0 : Buffer.byteLength(block.text));
  }
}

/** At most `bytes` bytes of `text` as UTF-8, never half a character. */
function cutUtf8(text: string, bytes: number): string {
  const buffer = Buffer.from(text.slice(0, bytes));
  if (buffer.length <= bytes) return text.slice(0, bytes);
  let end = bytes;
  while (end > 0 && (buffer[end]! & 0xc0) === 0x80) end--;
  return buffer.subarray(0, end).toString("utf8");
}

/** "312 B", "1.2 KB", "5.0 MB". */
export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The decoded size of base64 text. */
export function base64Bytes(data: string): number {
  return Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
