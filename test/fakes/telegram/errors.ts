// The Bot API's real error answers for the failures a bot meets in production, word for word, so a test can make
// the fake answer one of them for a chat (fake.failChat) or a method (fake.failNext / failWhen).
//
// Where each text comes from (reports quoting the real API's JSON, and libraries that match on the texts):
// - 403 "Forbidden: bot was blocked by the user", "Forbidden: bot was kicked from the group chat", "Forbidden: user is
//   deactivated": tucnak/telebot pull request #659 (its table of Bot API errors), LibertyPaul/LostFilmUpdatesBot
//   issue #57 (full body for "user is deactivated"), TelegramBots/Telegram.Bot issue #250 ("kicked from the group chat").
// - 400 "Bad Request: chat not found": python-telegram-bot tests/test_bot.py (test_leave_chat, "Chat not found").
// - 400 "Bad Request: message thread not found": tdlib/telegram-bot-api issues #472 and #596 (full bodies).
// - 400 "Bad Request: TOPIC_CLOSED": rteixeirax/qbittorrent_telegram_notification issue #12 (full body).
// - 400 "Bad Request: group chat was upgraded to a supergroup chat" with parameters.migrate_to_chat_id:
//   TwiN/gatus issue #179 (full body); aiogram maps that parameter to TelegramMigrateToChat
//   (tests/test_api/test_client/test_session/test_base_session.py).
// - 429 "Too Many Requests: retry after N" with parameters.retry_after: the Bot API documentation
//   (ResponseParameters.retry_after); aiogram's TelegramRetryAfter in the same test.

import type { Failure } from "./server.js";

export const TG_ERRORS = {
  blocked: { error_code: 403, description: "Forbidden: bot was blocked by the user" },
  kicked: { error_code: 403, description: "Forbidden: bot was kicked from the group chat" },
  deactivated: { error_code: 403, description: "Forbidden: user is deactivated" },
  chatNotFound: { error_code: 400, description: "Bad Request: chat not found" },
  threadNotFound: { error_code: 400, description: "Bad Request: message thread not found" },
  topicClosed: { error_code: 400, description: "Bad Request: TOPIC_CLOSED" },
  /** `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 300","parameters":{"retry_after":300}}` */
  floodWait: (seconds: number): Failure => ({ error_code: 429, description: `Too Many Requests: retry after ${seconds}`, retry_after: seconds }),
  /** The old group's id answers this for every method once the group became the supergroup `to`. */
  migrated: (to: number): Failure => ({ error_code: 400, description: "Bad Request: group chat was upgraded to a supergroup chat", migrate_to_chat_id: to }),
} as const satisfies Record<string, Failure | ((arg: number) => Failure)>;
