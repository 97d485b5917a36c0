// Builds realistic incoming messages for fake.userMessage(): the shapes grammy
// and the bot see from real Telegram (from/chat/date, detected bot_command and
// mention entities, media objects, forum topic fields, replies to the bot).

import { randomBytes } from "node:crypto";
import type { MessageEntity } from "./common.js";
import { filesOf } from "./files.js";
import { type ChatState, type State, type TgObject, type TgUpdate } from "./state.js";

export interface UserMessageOptions {
  chatId: number;
  /** Default: "private" for a positive chatId, "supergroup" for a forum or a -100… id, else "group". */
  chatType?: "private" | "group" | "supergroup";
  isForum?: boolean;
  threadId?: number;
  fromId: number;
  username?: string;
  firstName?: string;
  text?: string;
  /** Caption of the photo/voice; for media messages `text` is used as the caption when this is absent. */
  caption?: string;
  photo?: boolean;
  sticker?: boolean;
  voice?: boolean;
  replyToMessageId?: number;
  replyToFromBot?: boolean;
  edited?: boolean;
  /** Message id to use; an edit defaults to the user's latest message in the chat. */
  messageId?: number;
}

/** A 4×3 JPEG, what the fake's file server holds for every photo size a built message carries. */
const TINY_JPEG = Buffer.from(
  "/9j/2wBDAAYEBQYFBAYGBQYHBwYIChAKCgkJChQODwwQFxQYGBcUFhYaHSUfGhsjHBYWICwgIyYnKSopGR8tMC0oMCUoKSj/2wBDAQcHBwoIChMKChMoGhYaKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCj/wAARCAADAAQDASIAAhEBAxEB/8QAFQABAQAAAAAAAAAAAAAAAAAAAAP/xAAUEAEAAAAAAAAAAAAAAAAAAAAA/8QAFAEBAAAAAAAAAAAAAAAAAAAABv/EABQRAQAAAAAAAAAAAAAAAAAAAAD/2gAMAwEAAhEDEQA/AIAGYi//2Q==",
  "base64",
);
/** The first page of an Ogg Opus stream (what a voice note starts with). */
const OGG_OPUS = Buffer.concat([Buffer.from("OggS", "latin1"), Buffer.alloc(24), Buffer.from("OpusHead", "latin1"), Buffer.alloc(28)]);

const fileIds = () => {
  const id = randomBytes(8).toString("hex");
  return { file_id: `fake-file-${id}`, file_unique_id: `fake-uniq-${id}` };
};

/** bot_command and mention entities, as Telegram detects them in incoming text (UTF-16 offsets). */
export function detectEntities(text: string): MessageEntity[] {
  const entities: MessageEntity[] = [];
  for (const m of text.matchAll(/(^|\s)(\/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?)(?![A-Za-z0-9_@])/g)) {
    entities.push({ type: "bot_command", offset: m.index + m[1]!.length, length: m[2]!.length });
  }
  for (const m of text.matchAll(/(^|[^A-Za-z0-9_/@])(@[A-Za-z0-9_]{3,32})(?![A-Za-z0-9_])/g)) {
    entities.push({ type: "mention", offset: m.index + m[1]!.length, length: m[2]!.length });
  }
  return entities.sort((a, b) => a.offset - b.offset);
}

function defaultChatType(opts: UserMessageOptions): "private" | "group" | "supergroup" {
  if (opts.chatType) return opts.chatType;
  if (opts.chatId > 0) return "private";
  return opts.isForum || String(opts.chatId).startsWith("-100") ? "supergroup" : "group";
}

function ensureChat(state: State, opts: UserMessageOptions, user: TgObject): ChatState {
  const type = defaultChatType(opts);
  const known = state.chats.get(opts.chatId);
  const chat: TgObject =
    type === "private"
      ? { id: opts.chatId, type, first_name: user.first_name, ...(opts.username && { username: opts.username }) }
      : { id: opts.chatId, type, title: known?.chat.title ?? `Test ${type} ${opts.chatId}` };
  if (opts.isForum !== undefined) chat.is_forum = opts.isForum;
  return state.registerChat(chat);
}

/** The message a user message replies to: an existing one, or a stand-in the bot is able to reply to as well. */
function replyTo(state: State, chat: ChatState, opts: UserMessageOptions): TgObject | undefined {
  if (opts.replyToMessageId === undefined && !opts.replyToFromBot) return undefined;
  let id = opts.replyToMessageId;
  if (id === undefined) {
    const lastFromBot = [...chat.messages.values()].reverse().find((m) => m.fromBot && !m.deleted);
    id = (lastFromBot?.message.message_id as number | undefined) ?? state.allocateMessageId(chat);
  }
  const known = chat.messages.get(id);
  const message: TgObject = known ? { ...known.message } : { message_id: id, date: state.nowSeconds() - 60, chat: chat.chat, text: "(an earlier message)" };
  if (opts.replyToFromBot) message.from = state.botUser;
  delete message.reply_to_message;
  if (!known) state.noteMessage(chat, message, opts.replyToFromBot === true);
  return message;
}

/** The update for fake.userMessage(), without update_id (pushUpdate assigns it). */
export function buildUserMessage(state: State, opts: UserMessageOptions): Omit<TgUpdate, "update_id"> {
  const from: TgObject = {
    id: opts.fromId,
    is_bot: false,
    first_name: opts.firstName ?? `User${opts.fromId}`,
    ...(opts.username && { username: opts.username }),
    language_code: "en",
  };
  const chat = ensureChat(state, opts, from);

  let messageId = opts.messageId;
  let original: TgObject | undefined;
  if (opts.edited) {
    const fromUser = (m: TgObject) => (m.from as TgObject | undefined)?.id === opts.fromId;
    original =
      messageId !== undefined ? chat.messages.get(messageId)?.message : [...chat.messages.values()].reverse().find((m) => !m.fromBot && fromUser(m.message))?.message;
    messageId ??= original?.message_id as number | undefined;
  }
  messageId ??= state.allocateMessageId(chat);

  const now = state.nowSeconds();
  // An edit keeps the original send date; edit_date carries the time of the edit.
  const date = typeof original?.date === "number" ? original.date : now;
  const message: TgObject = { message_id: messageId, from, chat: chat.chat, date };
  if (opts.threadId !== undefined) {
    message.message_thread_id = opts.threadId;
    if (chat.chat.is_forum === true) message.is_topic_message = true;
  }
  const replied = replyTo(state, chat, opts);
  if (replied) message.reply_to_message = replied;

  const isMedia = opts.photo || opts.sticker || opts.voice;
  if (opts.photo) {
    // The sizes exist on the fake's file server (a tiny JPEG each), so a bot that downloads them gets an image.
    const stored = () => {
      const file = filesOf(state).add(TINY_JPEG, "photos", "jpg");
      return { file_id: file.file_id, file_unique_id: file.file_unique_id };
    };
    message.photo = [
      { ...stored(), width: 90, height: 68, file_size: 1_500 },
      { ...stored(), width: 1280, height: 960, file_size: 120_000 },
    ];
  }
  if (opts.sticker) {
    message.sticker = {
      ...fileIds(),
      type: "regular",
      width: 512,
      height: 512,
      is_animated: false,
      is_video: false,
      emoji: "👍",
      set_name: "FakeStickers",
      file_size: 20_000,
    };
  }
  if (opts.voice) {
    const file = filesOf(state).add(OGG_OPUS, "voice", "oga");
    message.voice = { file_id: file.file_id, file_unique_id: file.file_unique_id, duration: 2, mime_type: "audio/ogg", file_size: OGG_OPUS.length };
  }
  if (isMedia) {
    const caption = opts.caption ?? opts.text;
    // Stickers cannot carry captions on Telegram.
    if (caption !== undefined && !opts.sticker) {
      message.caption = caption;
      const entities = detectEntities(caption);
      if (entities.length > 0) message.caption_entities = entities;
    }
  } else {
    const text = opts.text ?? opts.caption ?? "";
    message.text = text;
    const entities = detectEntities(text);
    if (entities.length > 0) message.entities = entities;
  }

  if (opts.edited) {
    message.edit_date = now;
    return { edited_message: message };
  }
  return { message };
}
