// Files in the fake Slack, with the shapes Slack documents:
// - a file object as message events carry it (docs.slack.dev/reference/objects/file-object, and the recorded
//   file_share event in test/fixtures/slack/file_share.json): id, name, title, mimetype, filetype, size, mode,
//   url_private, url_private_download. In a Slack Connect channel the event carries only
//   `{id, mode: "file_access", file_access: "check_file_info"}` and files.info gives the rest (docs.slack.dev,
//   reference/events/message/file_share, "Slack Connect files").
// - url_private_download needs `Authorization: Bearer <token>` with files:read; without it Slack answers 200 with
//   its HTML sign-in page rather than an error (docs.slack.dev "Working with files": "Authentication"), which is
//   what this fake serves for a missing or wrong token, or once `filesScope(false)` took files:read away.
// - files.info answers `missing_scope` (needed: files:read) without the scope; `file_not_found` for an unknown id.
// - uploads (docs.slack.dev/reference/methods/files.getUploadURLExternal, files.completeUploadExternal):
//   getUploadURLExternal(filename, length) → {upload_url, file_id}; the bytes are POSTed to upload_url (200
//   "OK - <length>"); completeUploadExternal(files: [{id, title?}], channel_id?, thread_ts?, initial_comment?)
//   shares them as one message, answering `{files: [...]}`. Errors: invalid_arguments, file_not_found,
//   channel_not_found / not_in_channel (as chat.postMessage), and a thread_ts that is no message: invalid_thread_ts.
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { SlackError, type Params } from "./common.js";
import { postable, TEAM_ID, type Handler } from "./methods.js";
import type { State } from "./state.js";

export interface SlackFile {
  id: string;
  name: string;
  mimetype: string;
  size: number;
  bytes: Buffer;
}

/** What the bot shared with completeUploadExternal. */
export interface SharedFile {
  channel: string;
  thread_ts?: string;
  ts: string;
  title: string;
  filename: string;
  bytes: Buffer;
  initial_comment?: string;
}

const SIGN_IN_PAGE = `<!DOCTYPE html><html lang="en-US"><head><meta charset="utf-8"><title>Slack</title></head><body><div id="page"><h1>Sign in to Test Team</h1><form action="/signin" method="post"></form></div></body></html>`;

export class FileState {
  base = "";
  scope = true;
  readonly byId = new Map<string, SlackFile>();
  readonly pending = new Map<string, { filename: string; length: number; bytes: Buffer | null }>();
  shared: SharedFile[] = [];
  /** Downloads that fail with this status (the count left). */
  readonly failing = new Map<string, { status: number; left: number }>();
  /** The ids of the files downloaded (answered or failed), in order. */
  readonly downloads: string[] = [];

  reset(): void {
    this.scope = true;
    this.downloads.length = 0;
    this.byId.clear();
    this.pending.clear();
    this.shared = [];
    this.failing.clear();
  }

  add(bytes: Buffer, name: string, mimetype: string, declaredSize?: number): SlackFile {
    const file = { id: `F${randomBytes(5).toString("hex").toUpperCase()}`, name, mimetype, size: declaredSize ?? bytes.length, bytes };
    this.byId.set(file.id, file);
    return file;
  }

  /** The file object as a message event (or files.info) carries it. */
  object(file: SlackFile): Record<string, unknown> {
    const path = `${TEAM_ID}-${file.id}`;
    return {
      id: file.id,
      name: file.name,
      title: file.name,
      mimetype: file.mimetype,
      filetype: file.name.split(".").pop() ?? "",
      size: file.size,
      mode: "hosted",
      is_external: false,
      url_private: `${this.base}/files-pri/${path}/${encodeURIComponent(file.name)}`,
      url_private_download: `${this.base}/files-pri/${path}/download/${encodeURIComponent(file.name)}`,
    };
  }
}

const files = new WeakMap<State, FileState>();
export function filesOf(state: State): FileState {
  let f = files.get(state);
  if (!f) files.set(state, (f = new FileState()));
  return f;
}

/** GET /files-pri/<team>-<id>/…: the bytes with a valid token and files:read, else Slack's sign-in page. */
export function serveDownload(state: State, req: IncomingMessage, res: ServerResponse, path: string, botToken: string): boolean {
  const m = /^\/files-pri\/[A-Z0-9]+-(F[A-Z0-9]+)\//.exec(path);
  if (!m || req.method !== "GET") return false;
  const f = filesOf(state);
  const authorized = req.headers.authorization === `Bearer ${botToken}` && f.scope;
  const file = f.byId.get(m[1]!);
  f.downloads.push(m[1]!);
  if (!authorized) return (void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(SIGN_IN_PAGE), true);
  const failing = f.failing.get(m[1]!);
  if (failing && failing.left > 0) {
    failing.left--;
    return (void res.writeHead(failing.status, { "content-type": "text/plain" }).end("error"), true);
  }
  if (!file) return (void res.writeHead(404, { "content-type": "text/plain" }).end("file not found"), true);
  res.writeHead(200, { "content-type": file.mimetype, "content-length": file.bytes.length }).end(file.bytes);
  return true;
}

/** POST /upload/v1/<id>: the bytes of an upload (raw, or the SDK's multipart body). */
export async function receiveUpload(state: State, req: IncomingMessage, res: ServerResponse, path: string, body: Buffer): Promise<boolean> {
  const m = /^\/upload\/v1\/([A-Za-z0-9]+)$/.exec(path);
  if (!m || req.method !== "POST") return false;
  const pending = filesOf(state).pending.get(m[1]!);
  if (!pending) return (void res.writeHead(404, { "content-type": "text/plain" }).end("Not Found"), true);
  let bytes = body;
  const type = req.headers["content-type"] ?? "";
  if (type.toLowerCase().startsWith("multipart/form-data")) {
    const form = await new Response(body, { headers: { "content-type": type } }).formData();
    const part = [...form.values()].find((v): v is File => typeof v !== "string");
    bytes = part ? Buffer.from(await part.arrayBuffer()) : Buffer.alloc(0);
  }
  pending.bytes = bytes;
  res.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${bytes.length}`);
  return true;
}

const text = (params: Params, name: string) => (typeof params[name] === "string" ? (params[name] as string) : undefined);

export const FILE_METHODS: Record<string, Handler> = {
  "files.info": (state, params) => {
    const f = filesOf(state);
    if (!f.scope) throw new SlackError("missing_scope", { needed: "files:read", provided: "chat:write" });
    const file = f.byId.get(text(params, "file") ?? "");
    if (!file) throw new SlackError("file_not_found");
    return { file: f.object(file) };
  },
  "files.getUploadURLExternal": (state, params) => {
    const filename = text(params, "filename");
    const length = Number(params.length);
    if (!filename || !Number.isInteger(length) || length <= 0) throw new SlackError("invalid_arguments");
    const id = `F${randomBytes(5).toString("hex").toUpperCase()}`;
    const f = filesOf(state);
    f.pending.set(id, { filename, length, bytes: null });
    return { upload_url: `${f.base}/upload/v1/${id}`, file_id: id };
  },
  "files.completeUploadExternal": (state, params) => {
    // Form-encoded, `files` is a JSON string (as the SDK sends it).
    let list = params.files;
    if (typeof list === "string") {
      try {
        list = JSON.parse(list) as unknown;
      } catch {
        throw new SlackError("invalid_arguments");
      }
    }
    if (!Array.isArray(list) || list.length === 0) throw new SlackError("invalid_arguments");
    const f = filesOf(state);
    const channel = text(params, "channel_id");
    const thread = text(params, "thread_ts");
    if (channel) postable(state, channel);
    if (channel && thread && !state.find(channel, thread)) throw new SlackError("invalid_thread_ts");
    const done = list.map((entry) => {
      const id = (entry as { id?: unknown }).id;
      const pending = typeof id === "string" ? f.pending.get(id) : undefined;
      if (!pending || pending.bytes === null) throw new SlackError("file_not_found");
      if (pending.bytes.length !== pending.length) throw new SlackError("file_upload_size_mismatch" as string);
      const title = typeof (entry as { title?: unknown }).title === "string" ? (entry as { title: string }).title : pending.filename;
      return { id: id as string, title, pending };
    });
    if (channel) {
      const comment = text(params, "initial_comment");
      const ts = state.nextTs();
      state.store({
        channel,
        ts,
        ...(thread ? { thread_ts: thread } : {}),
        user: "U0BOT",
        text: comment ?? "",
        params: { files: done.map((d) => d.id) },
        edits: 0,
        deleted: false,
        reactions: [],
      });
      for (const d of done) {
        f.shared.push({
          channel,
          ts,
          title: d.title,
          filename: d.pending.filename,
          bytes: d.pending.bytes!,
          ...(thread ? { thread_ts: thread } : {}),
          ...(comment !== undefined ? { initial_comment: comment } : {}),
        });
      }
    }
    for (const d of done) f.pending.delete(d.id);
    return { files: done.map((d) => ({ id: d.id, title: d.title, name: d.pending.filename, size: d.pending.length })) };
  },
};
