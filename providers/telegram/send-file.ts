import { GrammyError, InputFile, type Api } from "grammy";
import type { OutboundFile } from "../../src/files/types.js";
import { parseTelegramKey } from "./inbound.js";
import { deliveryFailure } from "./outbound.js";

// A file an agent sends: sendPhoto for an image Telegram takes as a photo (at most 10 MB, width + height at most
// 10000, ratio at most 20: the Bot API's sendPhoto rules), sendDocument for everything else (multipart uploads).
// A caption past Telegram's 1024 characters goes as a message of its own after the file.

const PHOTO_TYPES = new Set(["image/jpeg", "image/png", "image/webp"]);
const PHOTO_BYTES = 10 * 1024 * 1024;
const CAPTION_MAX = 1024;

export async function sendTelegramFile(api: Api, file: OutboundFile): Promise<void> {
  const { chatId, threadId } = parseTelegramKey(file.sessionKey);
  const fitting = file.caption !== undefined && file.caption.length <= CAPTION_MAX;
  const base = { ...(threadId !== undefined ? { message_thread_id: threadId } : {}), ...(fitting ? { caption: file.caption } : {}) };
  try {
    if (await asPhoto(file)) {
      try {
        await api.sendPhoto(chatId, new InputFile(file.bytes, file.name), base);
      } catch (error) {
        // Telegram's own judgement of a photo differs from ours now and then: a document still arrives.
        if (!(error instanceof GrammyError && /PHOTO_INVALID_DIMENSIONS|IMAGE_PROCESS_FAILED/.test(error.description))) throw error;
        await api.sendDocument(chatId, new InputFile(file.bytes, file.name), base);
      }
    } else {
      await api.sendDocument(chatId, new InputFile(file.bytes, file.name), base);
    }
    if (file.caption !== undefined && !fitting) await api.sendMessage(chatId, file.caption, threadId !== undefined ? { message_thread_id: threadId } : {});
  } catch (error) {
    throw deliveryFailure(error);
  }
}

async function asPhoto(file: OutboundFile): Promise<boolean> {
  if (file.kind !== "image" || !PHOTO_TYPES.has(file.mime) || file.bytes.length > PHOTO_BYTES) return false;
  // sharp is loaded on the first image sent, not at every start.
  const { default: sharp } = await import("sharp");
  const meta = await sharp(file.bytes)
    .metadata()
    .catch(() => null);
  if (!meta?.width || !meta.height) return false;
  return meta.width + meta.height <= 10_000 && Math.max(meta.width, meta.height) / Math.min(meta.width, meta.height) <= 20;
}
