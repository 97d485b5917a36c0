import type { Message, MessageEntity } from "grammy/types";
import { sessionKey } from "../../src/gateway/session-key.js";

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
 * Whether a message is aimed at the bot: any private message; in groups a mention, a reply to one
 * of the bot's messages, or a command that is not addressed to another bot.
 */
export function isAddressed(message: Message, bot: BotIdentity): boolean {
  if (message.chat.type === "private") return true;
  if (message.reply_to_message?.from?.id === bot.id) return true;
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
  const cleaned = text.replace(new RegExp(`@${bot.username}\\b`, "gi"), "").replace(/\s{2,}/g, " ").trim();
  return cleaned === "" ? text.trim() : cleaned;
}

/** Allowlist entries are numeric ids or @usernames (case-insensitive); an empty list allows everyone. */
export function isAllowed(allowed: readonly string[], user: { id: number; username?: string | undefined } | undefined): boolean {
  if (allowed.length === 0) return true;
  if (!user) return false;
  return allowed.some((entry) =>
    entry.startsWith("@") ? entry.slice(1).toLowerCase() === user.username?.toLowerCase() : entry === String(user.id),
  );
}
