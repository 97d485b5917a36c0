// Files in the fake Bot API, as the Bot API documents them (core.telegram.org/bots/api: getFile, "Sending files",
// sendPhoto, sendDocument): getFile answers a File with a `file_path` valid for an hour, downloaded from
// <root>/file/bot<token>/<file_path>; bots may download files of up to 20 MB, and getFile on a larger one answers
// 400 "Bad Request: file is too big" (the Bot API server's wording, quoted in python-telegram-bot and grammY
// reports). Uploads are multipart/form-data: a photo of at most 10 MB whose width plus height is at most 10000 and
// ratio at most 20 (else 400 "Bad Request: PHOTO_INVALID_DIMENSIONS"; not an image: "Bad Request: IMAGE_PROCESS_FAILED"),
// a document of at most 50 MB (else 413 "Request Entity Too Large"), a caption of at most 1024 characters
// ("Bad Request: message caption is too long").
import { randomBytes } from "node:crypto";
import sharp from "sharp";
import { badRequest, optInt, optString, TgError, type Params } from "./common.js";
import type { State, TgObject } from "./state.js";

export const DOWNLOAD_LIMIT = 20 * 1024 * 1024;
export const PHOTO_LIMIT = 10 * 1024 * 1024;
export const DOCUMENT_LIMIT = 50 * 1024 * 1024;

/** A file part of a multipart upload. */
export class Upload {
  constructor(
    readonly filename: string,
    readonly mime: string,
    readonly bytes: Buffer,
  ) {}
}

export interface StoredFile {
  file_id: string;
  file_unique_id: string;
  file_size: number;
  file_path: string;
  bytes: Buffer;
}

export interface SentFile {
  chat_id: number;
  method: "sendPhoto" | "sendDocument";
  message_id: number;
  filename: string;
  mime: string;
  bytes: Buffer;
  caption?: string;
  message_thread_id?: number;
}

export class FileState {
  readonly byId = new Map<string, StoredFile>();
  readonly byPath = new Map<string, StoredFile>();
  sent: SentFile[] = [];
  /** Download paths whose next tries fail with this status (the count left). */
  readonly failing = new Map<string, { status: number; left: number }>();

  add(bytes: Buffer, folder = "documents", ext = "bin", declaredSize?: number, fileId?: string): StoredFile {
    const id = randomBytes(8).toString("hex");
    const file = {
      file_id: fileId ?? `fake-file-${id}`,
      file_unique_id: `fake-uniq-${id}`,
      file_size: declaredSize ?? bytes.length,
      file_path: `${folder}/file_${id}.${ext}`,
      bytes,
    };
    this.byId.set(file.file_id, file);
    this.byPath.set(file.file_path, file);
    return file;
  }

  reset(): void {
    this.byId.clear();
    this.byPath.clear();
    this.sent = [];
    this.failing.clear();
  }
}

const files = new WeakMap<State, FileState>();
export function filesOf(state: State): FileState {
  let f = files.get(state);
  if (!f) files.set(state, (f = new FileState()));
  return f;
}

function getFile(state: State, params: Params): TgObject {
  const id = optString(params, "file_id");
  const file = id ? filesOf(state).byId.get(id) : undefined;
  if (!file) throw badRequest("invalid file_id");
  if (file.file_size > DOWNLOAD_LIMIT) throw badRequest("file is too big");
  return { file_id: file.file_id, file_unique_id: file.file_unique_id, file_size: file.file_size, file_path: file.file_path };
}

/** GET /file/bot<token>/<file_path>: the bytes, or 404 as api.telegram.org answers an unknown path. */
export function download(state: State, path: string): { status: number; body: Buffer; type: string } {
  const f = filesOf(state);
  const failing = f.failing.get(path);
  if (failing && failing.left > 0) {
    failing.left--;
    return {
      status: failing.status,
      body: Buffer.from(JSON.stringify({ ok: false, error_code: failing.status, description: "Internal Server Error" })),
      type: "application/json",
    };
  }
  const file = f.byPath.get(path);
  if (!file) return { status: 404, body: Buffer.from(JSON.stringify({ ok: false, error_code: 404, description: "Not Found" })), type: "application/json" };
  return { status: 200, body: file.bytes, type: "application/octet-stream" };
}

async function sendFile(state: State, params: Params, seq: number, method: "sendPhoto" | "sendDocument"): Promise<TgObject> {
  const field = method === "sendPhoto" ? "photo" : "document";
  const chat = state.resolveChat(params);
  const caption = optString(params, "caption");
  if (caption !== undefined && caption.length > 1024) throw badRequest("message caption is too long");
  const upload = params[field];
  if (!(upload instanceof Upload)) {
    if (typeof upload === "string" && upload !== "") throw badRequest("wrong remote file identifier specified: can't unserialize it");
    throw badRequest(`there is no ${field} in the request`);
  }
  if (method === "sendDocument" && upload.bytes.length > DOCUMENT_LIMIT) throw new TgError(413, "Request Entity Too Large");
  let photo: TgObject[] | undefined;
  if (method === "sendPhoto") {
    if (upload.bytes.length > PHOTO_LIMIT) throw badRequest("PHOTO_INVALID_DIMENSIONS");
    const meta = await sharp(upload.bytes)
      .metadata()
      .catch(() => null);
    if (!meta?.width || !meta.height) throw badRequest("IMAGE_PROCESS_FAILED");
    if (meta.width + meta.height > 10_000 || Math.max(meta.width, meta.height) / Math.min(meta.width, meta.height) > 20) throw badRequest("PHOTO_INVALID_DIMENSIONS");
    const stored = filesOf(state).add(upload.bytes, "photos", "jpg");
    photo = [{ file_id: stored.file_id, file_unique_id: stored.file_unique_id, file_size: stored.file_size, width: meta.width, height: meta.height }];
  }
  const threadId = optInt(params, "message_thread_id");
  const stored = photo ? null : filesOf(state).add(upload.bytes, "documents", upload.filename.split(".").pop() ?? "bin");
  const message: TgObject = {
    message_id: state.allocateMessageId(chat),
    from: state.botUser,
    chat: chat.chat,
    date: state.nowSeconds(),
    ...(threadId !== undefined && { message_thread_id: threadId }),
    ...(photo
      ? { photo }
      : {
          document: {
            file_id: stored!.file_id,
            file_unique_id: stored!.file_unique_id,
            file_name: upload.filename,
            mime_type: upload.mime,
            file_size: upload.bytes.length,
          },
        }),
    ...(caption !== undefined && { caption }),
  };
  state.noteMessage(chat, message, true);
  filesOf(state).sent.push({
    chat_id: chat.chat.id as number,
    method,
    message_id: message.message_id as number,
    filename: upload.filename,
    mime: upload.mime,
    bytes: upload.bytes,
    ...(caption !== undefined && { caption }),
    ...(threadId !== undefined && { message_thread_id: threadId }),
  });
  state.events.push({
    kind: "message",
    chat_id: chat.chat.id as number,
    ...(threadId !== undefined && { message_thread_id: threadId }),
    message_id: message.message_id as number,
    text: caption ?? "",
    seq,
    at: state.now(),
  });
  return message;
}

export const FILE_METHODS = {
  getfile: (state: State, params: Params) => getFile(state, params),
  sendphoto: (state: State, params: Params, seq: number) => sendFile(state, params, seq, "sendPhoto"),
  senddocument: (state: State, params: Params, seq: number) => sendFile(state, params, seq, "sendDocument"),
};

/**
 * A multipart body as the Bot API reads it: fields as strings, files as Uploads, `attach://<name>` resolved. Parsed
 * by hand: grammY writes `content-disposition:form-data;name="…"` without spaces, which the Bot API takes and
 * undici's strict FormData parser does not.
 */
export async function parseMultipart(contentType: string, body: Buffer): Promise<Params> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!boundary) throw new Error("no boundary");
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]!.trim()}`);
  const params: Params = {};
  const parts = new Map<string, Upload>();
  let at = body.indexOf(delimiter);
  if (at < 0) throw new Error("no parts");
  for (;;) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === "--") break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) throw new Error("unterminated part");
    const part = body.subarray(start + 2, next - 2);
    const split = part.indexOf("\r\n\r\n");
    if (split < 0) throw new Error("part without headers");
    const headers = part.subarray(0, split).toString("utf8");
    const content = part.subarray(split + 4);
    const name = /(?:^|;)\s*name="([^"]*)"/i.exec(headers)?.[1];
    if (name === undefined) throw new Error("part without a name");
    // grammY writes `filename=chart.png` unquoted, which the Bot API takes.
    const fileMatch = /filename=(?:"([^"]*)"|([^;\r\n]*))/i.exec(headers);
    const filename = fileMatch ? (fileMatch[1] ?? fileMatch[2]!.trim()) : undefined;
    const type = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1]?.trim();
    if (filename !== undefined) parts.set(name, new Upload(filename, type ?? "application/octet-stream", Buffer.from(content)));
    else params[name] = content.toString("utf8");
    at = next;
  }
  for (const [name, part] of parts) params[name] = part;
  for (const [name, value] of Object.entries(params)) {
    if (typeof value === "string" && value.startsWith("attach://")) params[name] = parts.get(value.slice("attach://".length)) ?? value;
  }
  return params;
}
