import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { z } from "zod";
import { declaredKind, detectType } from "../../src/files/detect.js";
import { contentId } from "../../src/files/ids.js";
import { acceptFile } from "../../src/files/intake.js";
import { formatBytes, type FileLimits } from "../../src/files/limits.js";
import { sanitizeFilename } from "../../src/files/names.js";
import type { ReceivedFile } from "../../src/files/types.js";
import { HttpError, invalid, MAX_BODY, readBody } from "./request.js";

// The body of POST /v1/messages, as JSON or multipart/form-data. An item is `{content_type, content, filename?}`:
// "text" is the message's text; any other MIME type is a file whose content is base64. A multipart body carries
// the same fields as form fields (`text` for text, `metadata` as JSON) and its files as file parts. Every file is
// judged by src/files (type from the bytes, images re-encoded); anything wrong is a 400 naming the item, anything
// too large a 413 naming the limit.

const uuid = z.uuid({ error: "must be a UUID" });
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}(\s*;.*)?$/i;
const item = z.object({
  content_type: z
    .string({ error: 'must be "text" or a MIME type such as image/png' })
    .refine((v) => v === "text" || MIME.test(v), { error: 'must be "text" or a MIME type such as image/png' }),
  content: z.string().min(1, { error: "must not be empty" }),
  filename: z.string().max(1024, { error: "must be at most 1024 characters" }).optional(),
});
const messageBody = z.object({
  session_id: uuid.optional(),
  task_id: uuid.optional(),
  // Checked by taskOptionsOf, on the value as parsed (zod's copy of an object would drop a "__proto__" key).
  expires_at: z.unknown().optional(),
  metadata: z.unknown().optional(),
  items: z.array(item, { error: "must be a list of {content_type, content, filename?} items" }).min(1, { error: "must hold at least one item" }),
});

export interface MessageBody {
  session_id?: string | undefined;
  task_id?: string | undefined;
  expires_at?: unknown;
  metadata?: unknown;
  text: string;
  files: ReceivedFile[];
  /**
   * What an Idempotency-Key's retry must repeat: the fields, and each file by its content. A function: it is called
   * only after the metadata was checked (a body nested too deep must be a 400, not a stack overflow here).
   */
  fingerprint: () => string;
}

/** One file as the body carried it, before it is judged. */
interface RawItem {
  where: string;
  contentType: string;
  filename: string | undefined;
  bytes: Buffer;
}

/** The largest body a message may have: its text, and its files in base64 (4/3 of their size). */
export function maxMessageBody(limits: FileLimits): number {
  return MAX_BODY + Math.ceil((limits.maxFileBytes * 4) / 3 + 1024) * limits.maxFilesPerMessage;
}

export async function readMessageBody(req: IncomingMessage, limits: FileLimits): Promise<MessageBody> {
  const type = (req.headers["content-type"] ?? "").toLowerCase();
  const why = ` (at most ${limits.maxFilesPerMessage} files of at most ${formatBytes(limits.maxFileBytes)} each: MAX_FILES_PER_MESSAGE, MAX_FILE_BYTES)`;
  const raw = await readBody(req, maxMessageBody(limits), why);
  const parsed = type.startsWith("multipart/form-data") ? await fromMultipart(req.headers["content-type"]!, raw) : fromJson(raw);
  const { texts, files, fields } = parsed;
  const text = texts.join("\n\n");
  if (Buffer.byteLength(text) > MAX_BODY) throw new HttpError(413, "request_too_large", `the text is over ${formatBytes(MAX_BODY)}`);
  if (files.length > limits.maxFilesPerMessage) {
    throw new HttpError(
      400,
      "invalid_request_error",
      `the message has ${files.length} files; at most ${limits.maxFilesPerMessage} are taken per message (MAX_FILES_PER_MESSAGE)`,
      {
        limit: { name: "files_per_message", setting: "MAX_FILES_PER_MESSAGE", max: limits.maxFilesPerMessage },
      },
    );
  }
  const received: ReceivedFile[] = [];
  for (const file of files) received.push(await judge(file, limits));
  const fingerprint = () =>
    createHash("sha256")
      .update(JSON.stringify({ ...fields, text: texts, files: files.map((f) => [f.contentType, f.filename ?? null, contentId(f.bytes)]) }))
      .digest("hex");
  return { ...fields, text, files: received, fingerprint };
}

type Parsed = { texts: string[]; files: RawItem[]; fields: Omit<MessageBody, "text" | "files" | "fingerprint"> };

function fromJson(raw: Buffer): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString("utf8") || "null");
  } catch {
    throw new HttpError(400, "invalid_request_error", "the body is not valid JSON");
  }
  const body = messageBody.safeParse(value);
  if (!body.success) throw invalid(body.error);
  const { items, ...fields } = body.data;
  const texts: string[] = [];
  const files: RawItem[] = [];
  items.forEach((it, i) => {
    if (it.content_type === "text") return void texts.push(it.content);
    const bytes = decodeBase64(it.content);
    if (!bytes) throw new HttpError(400, "invalid_request_error", `items[${i}].content is not valid base64 (a file's content is its bytes in standard base64)`);
    files.push({ where: `items[${i}]`, contentType: it.content_type, filename: it.filename, bytes });
  });
  return { texts, files, fields };
}

/** Standard base64 (line breaks allowed, padding required when the length needs it); null when it is not. */
export function decodeBase64(content: string): Buffer | null {
  const compact = content.replace(/[\r\n]/g, "");
  if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) return null;
  const bytes = Buffer.from(compact, "base64");
  return bytes.length > 0 ? bytes : null;
}

const FIELDS = new Set(["session_id", "task_id", "expires_at", "metadata", "text"]);

async function fromMultipart(contentType: string, raw: Buffer): Promise<Parsed> {
  let form: FormData;
  try {
    form = await new Response(raw, { headers: { "content-type": contentType } }).formData();
  } catch {
    throw new HttpError(400, "invalid_request_error", "the body is not valid multipart/form-data");
  }
  const texts: string[] = [];
  const files: RawItem[] = [];
  const fields: Record<string, unknown> = {};
  let part = 0;
  for (const [name, value] of form.entries()) {
    const at = part++;
    const where = `part ${at} ("${sanitizeFilename(name, "unnamed")}")`;
    if (typeof value !== "string") {
      // Named by its file name (judge adds it), not by its field's.
      files.push({ where: `part ${at}`, contentType: value.type || "application/octet-stream", filename: value.name, bytes: Buffer.from(await value.arrayBuffer()) });
      continue;
    }
    if (!FIELDS.has(name))
      throw new HttpError(400, "invalid_request_error", `${where} is not a field of a message (session_id, task_id, expires_at, metadata, text, or a file)`);
    if (name === "text") {
      if (value !== "") texts.push(value);
    } else if (name === "metadata") {
      try {
        fields.metadata = JSON.parse(value);
      } catch {
        throw new HttpError(400, "invalid_request_error", "metadata must be a JSON object");
      }
    } else fields[name] = value;
  }
  if (texts.length === 0 && files.length === 0) throw new HttpError(400, "invalid_request_error", "the message has no text and no file");
  const checked = messageBody.omit({ items: true }).safeParse(fields);
  if (!checked.success) throw invalid(checked.error);
  return { texts, files, fields: checked.data };
}

async function judge(item: RawItem, limits: FileLimits): Promise<ReceivedFile> {
  const name = sanitizeFilename(item.filename, "file");
  const label = `${item.where} ("${name}")`;
  if (item.bytes.length > limits.maxFileBytes) {
    throw new HttpError(
      413,
      "request_too_large",
      `${label} is ${formatBytes(item.bytes.length)}; files can be at most ${formatBytes(limits.maxFileBytes)} (MAX_FILE_BYTES)`,
      {
        limit: { name: "file_bytes", setting: "MAX_FILE_BYTES", max: limits.maxFileBytes },
      },
    );
  }
  // A program that says image/png and sends a ZIP made a mistake worth hearing about, not a file to guess at.
  const detected = await detectType(item.bytes, name);
  const declared = declaredKind(item.contentType);
  if (declared && declared !== detected.kind) {
    throw new HttpError(
      400,
      "invalid_request_error",
      `${label} has content_type ${item.contentType} but its content is ${detected.label}; send its real type, or application/octet-stream`,
    );
  }
  const file = await acceptFile({ name, bytes: item.bytes, declaredMime: item.contentType }, limits);
  if (!file.ok) throw new HttpError(400, "invalid_request_error", `${item.where}: ${file.reason}`);
  // A PDF the model cannot read (too many pages, too large) is refused here: the client can split it.
  if (detected.kind === "pdf" && file.kind !== "pdf")
    throw new HttpError(
      400,
      "invalid_request_error",
      `${item.where}: ${file.note ?? "the PDF cannot be read"}`.replace(/ is kept but I can't read it:/, " can't be read:"),
    );
  return file;
}
