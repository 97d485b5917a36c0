import type { Message, MessageEntity } from "grammy/types";
import { sessionKey } from "../../src/gateway/index.js";

export const MAX_TEXT_BYTES = 16 * 1024;

export interface BotIdentity {
  id: number;
  username: string;
}

/** `telegram:<chat>`, or `telegram:<chat>:topic:<thread>` for a forum topic, so each topic is its own conversation. */
export function telegramSessionKey(message: Pick<Message, "chat" | "message_thread_id" | "is_topic_message">): string {
  if (message.is_topic_message && message.message_thread_id !== undefined) {
    return sessionKey("telegram", message.chat.id, "topic", message.message_thread_id);
  }
  return sessionKey("telegram", message.chat.id);
}

/** The chat and topic a session key points back to. */
export function parseTelegramKey(key: string): { chatId: number; threadId?: number } {
  const [, chat, kind, thread] = key.split(":");
  const chatId = Number(chat);
  return kind === "topic" ? { chatId, threadId: Number(thread) } : { chatId };
}

function entityText(text: string, e: MessageEntity): string {
  return text.slice(e.offset, e.offset + e.length);
}

/**
 * The fields of a message that someone wrote or sent (Bot API `Message`); a message with none of them is a
 * service message (a join, a pinned message, a topic opened, a group migrated, …), which nobody addressed to us.
 */
const CONTENT_FIELDS = [
  "text",
  "rich_message",
  "animation",
  "audio",
  "document",
  "live_photo",
  "paid_media",
  "photo",
  "sticker",
  "story",
  "video",
  "video_note",
  "voice",
  "contact",
  "dice",
  "game",
  "poll",
  "venue",
  "location",
  "checklist",
  "invoice",
  "giveaway",
] as const;

export function isServiceMessage(message: object): boolean {
  const fields = message as Record<string, unknown>;
  return !CONTENT_FIELDS.some((field) => fields[field] !== undefined);
}

/**
 * The message this one really replies to. In a forum topic Telegram sets `reply_to_message` of every message to
 * the topic's opening service message (`forum_topic_created`, id = the thread id), so chatter in a topic the bot
 * opened would look like replies to the bot; neither that nor any other service message counts as a reply.
 * (Only in topics: in other supergroups a reply to the first message of a reply thread also has its id as thread id.)
 */
export function repliedTo(message: Message): Message | undefined {
  const replied = message.reply_to_message;
  if (!replied || isServiceMessage(replied)) return undefined;
  if (message.is_topic_message && replied.message_id === message.message_thread_id) return undefined;
  return replied;
}

/**
 * Who sent a message: the chat it was sent on behalf of when there is one (an anonymous admin posts as the
 * group, a user can post as their channel; `from` is then a placeholder shared by everyone doing so:
 * GroupAnonymousBot 1087968824, Channel_Bot 136817688), else the user.
 */
export function senderOf(message: Message): { id: number; username?: string | undefined } | undefined {
  const chat = message.sender_chat;
  if (chat) return { id: chat.id, username: "username" in chat ? chat.username : undefined };
  return message.from;
}

/** Whether `text` starts with a command addressed to another bot (`/start@OtherBot`): not ours, whatever it says. */
export function isForeignCommand(text: string, bot: BotIdentity): boolean {
  const target = /^\/[A-Za-z0-9_]+@([A-Za-z0-9_]+)/.exec(text.trimStart())?.[1];
  return target !== undefined && target.toLowerCase() !== bot.username.toLowerCase();
}

/**
 * Whether a message is aimed at the bot: any private message; in groups a mention, a reply to one
 * of the bot's messages, or a command that is not addressed to another bot.
 */
export function isAddressed(message: Message, bot: BotIdentity): boolean {
  if (message.chat.type === "private") return true;
  if (repliedTo(message)?.from?.id === bot.id) return true;
  const text = message.text ?? message.caption ?? "";
  const entities = message.entities ?? message.caption_entities ?? [];
  const mention = `@${bot.username}`.toLowerCase();
  return entities.some((e) => {
    if (e.type === "mention") return entityText(text, e).toLowerCase() === mention;
    if (e.type === "text_mention") return e.user.id === bot.id;
    if (e.type === "bot_command" && e.offset === 0) {
      const target = entityText(text, e).split("@")[1];
      return target === undefined || `@${target}`.toLowerCase() === mention;
    }
    return false;
  });
}

/** The text the agents see: the caption counts as text; the bot's own @mention is dropped. */
export function messageText(message: Message, bot: BotIdentity): string | null {
  const text = message.text ?? message.caption;
  if (text === undefined) return null;
  const cleaned = text
    .replace(new RegExp(`@${bot.username}\\b`, "gi"), "")
    .replace(/\s{2,}/g, " ")
    .trim();
  return cleaned === "" ? text.trim() : cleaned;
}

/**
 * Allowlist entries are numeric ids or @usernames (case-insensitive); an empty list allows everyone. The sender
 * is the one `senderOf` names, so an entry may be a group's or channel's id (its anonymous admins, its posts).
 */
export function isAllowed(allowed: readonly string[], sender: { id: number; username?: string | undefined } | undefined): boolean {
  if (allowed.length === 0) return true;
  if (!sender) return false;
  return allowed.some((entry) => (entry.startsWith("@") ? entry.slice(1).toLowerCase() === sender.username?.toLowerCase() : entry === String(sender.id)));
}
