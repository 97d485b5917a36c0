import type { Api } from "grammy";
import type { Message } from "grammy/types";
import type { Logger } from "pino";
import { download } from "../../src/files/download.js";
import { acceptFile } from "../../src/files/intake.js";
import { formatBytes, quote, type FileLimits } from "../../src/files/limits.js";
import { sanitizeFilename } from "../../src/files/names.js";
import type { InboundFile } from "../../src/files/types.js";
import type { Timers } from "../../src/runtime/deps.js";

// The files of a Telegram message: photo (the largest size that can be downloaded), document, voice, audio,
// video_note and video. Each is fetched with getFile and downloaded from <TELEGRAM_API_ROOT>/file/bot<token>/<path>,
// so a self-hosted Bot API server works too; its size (file_size) is checked before anything is downloaded.

/** What a bot may download through the Bot API (a self-hosted server in --local mode has no such limit, but no URL either). */
export const BOT_API_DOWNLOAD_LIMIT = 20 * 1024 * 1024;

export interface WantedFile {
  fileId: string;
  name: string;
  declaredMime?: string;
  size?: number;
  voice?: boolean;
}

/** The kinds of message content that carry no file the agents can use (answered politely). */
const UNSUPPORTED: Array<[keyof Message, string]> = [
  ["sticker", "stickers"],
  ["animation", "GIFs"],
  ["location", "locations"],
  ["venue", "venues"],
  ["contact", "contacts"],
  ["poll", "polls"],
  ["dice", "dice"],
  ["game", "games"],
  ["story", "stories"],
  ["paid_media", "paid media"],
  ["checklist", "checklists"],
];

export function unsupportedContent(message: Message): string | null {
  const found = UNSUPPORTED.find(([field]) => message[field] !== undefined);
  return found ? `I can't read ${found[1]}. Send text, photos, documents, voice notes, audio or video instead.` : null;
}

/** The files a message carries, before anything is downloaded. */
export function wantedFiles(message: Message, limits: Pick<FileLimits, "maxFileBytes">): WantedFile[] {
  const wanted: WantedFile[] = [];
  const id = message.message_id;
  if (message.photo?.length) {
    // Sizes come smallest first; the largest that can be downloaded (and kept), else the largest (refused, naming the limit).
    const cap = Math.min(BOT_API_DOWNLOAD_LIMIT, limits.maxFileBytes);
    const fitting = message.photo.filter((p) => p.file_size === undefined || p.file_size <= cap);
    const photo = fitting.at(-1) ?? message.photo.at(-1)!;
    wanted.push({ fileId: photo.file_id, name: `photo-${id}.jpg`, declaredMime: "image/jpeg", ...size(photo.file_size) });
  }
  const d = message.document;
  if (d) wanted.push({ fileId: d.file_id, name: sanitizeFilename(d.file_name, `document-${id}`), ...mime(d.mime_type), ...size(d.file_size) });
  const v = message.voice;
  if (v) wanted.push({ fileId: v.file_id, name: `voice-${id}.ogg`, ...mime(v.mime_type ?? "audio/ogg"), ...size(v.file_size), voice: true });
  const a = message.audio;
  if (a) wanted.push({ fileId: a.file_id, name: sanitizeFilename(a.file_name, `audio-${id}`), ...mime(a.mime_type), ...size(a.file_size) });
  const n = message.video_note;
  if (n) wanted.push({ fileId: n.file_id, name: `video-note-${id}.mp4`, declaredMime: "video/mp4", ...size(n.file_size), voice: true });
  const video = message.video;
  if (video) wanted.push({ fileId: video.file_id, name: sanitizeFilename(video.file_name, `video-${id}.mp4`), ...mime(video.mime_type), ...size(video.file_size) });
  return wanted;
}

const size = (n: number | undefined) => (n === undefined ? {} : { size: n });
const mime = (m: string | undefined) => (m === undefined ? {} : { declaredMime: m });

export interface TelegramFileDeps {
  api: Api;
  token: string;
  apiRoot: string | undefined;
  limits: Pick<FileLimits, "maxFileBytes">;
  timers: Timers;
  log: Logger;
  /** Tries per download (default 3). */
  attempts?: number;
  backoffMs?: number;
}

/** Downloads and judges each file; one that cannot be read becomes a failure saying why, the others go on. */
export async function fetchTelegramFiles(wanted: WantedFile[], deps: TelegramFileDeps): Promise<InboundFile[]> {
  return Promise.all(wanted.map((w) => fetchOne(w, deps)));
}

async function fetchOne(w: WantedFile, deps: TelegramFileDeps): Promise<InboundFile> {
  const cap = Math.min(BOT_API_DOWNLOAD_LIMIT, deps.limits.maxFileBytes);
  if (w.size !== undefined && w.size > cap) return { ok: false, name: w.name, reason: limitReason(w.name, w.size, deps.limits.maxFileBytes) };
  let path: string | undefined;
  try {
    path = (await deps.api.getFile(w.fileId)).file_path;
  } catch (error) {
    const description = (error as { description?: string }).description ?? "";
    if (/file is too big/i.test(description)) return { ok: false, name: w.name, reason: limitReason(w.name, w.size ?? null, deps.limits.maxFileBytes) };
    deps.log.warn({ err: error }, "telegram getFile failed");
    return { ok: false, name: w.name, reason: `I could not download ${quote(w.name)} from Telegram; please send it again.` };
  }
  if (!path) return { ok: false, name: w.name, reason: `Telegram did not give me ${quote(w.name)} to download; please send it again.` };
  const root = (deps.apiRoot ?? "https://api.telegram.org").replace(/\/+$/, "");
  const result = await download({
    url: `${root}/file/bot${deps.token}/${path.split("/").map(encodeURIComponent).join("/")}`,
    maxBytes: cap,
    timers: deps.timers,
    ...(deps.attempts !== undefined ? { attempts: deps.attempts } : {}),
    ...(deps.backoffMs !== undefined ? { backoffMs: deps.backoffMs } : {}),
  });
  if (!result.ok) {
    if (result.problem === "too_large") return { ok: false, name: w.name, reason: limitReason(w.name, result.size, deps.limits.maxFileBytes) };
    // Never the URL: it carries the bot token.
    deps.log.warn(
      { problem: result.problem, status: "status" in result ? result.status : null, detail: "detail" in result ? result.detail : null },
      "telegram file download failed",
    );
    return { ok: false, name: w.name, reason: `I could not download ${quote(w.name)} from Telegram (tried ${deps.attempts ?? 3} times); please send it again.` };
  }
  return acceptFile({ name: w.name, bytes: result.bytes, declaredMime: w.declaredMime ?? null, ...(w.voice ? { voice: true } : {}) }, deps.limits);
}

function limitReason(name: string, size: number | null, maxFileBytes: number): string {
  const known = size === null ? "is too large" : `is ${formatBytes(size)}`;
  if (maxFileBytes < BOT_API_DOWNLOAD_LIMIT)
    return `${quote(name)} ${known}; files can be at most ${formatBytes(maxFileBytes)} here. Send a smaller file or a link to it.`;
  return `${quote(name)} ${known}; Telegram lets bots download files of up to 20 MB. Send a smaller file or a link to it.`;
}
