// The synchronous Bot API methods of the fake (getUpdates lives in server.ts
// because it long-polls). Each handler validates like Telegram, updates the
// State and returns the `result` of a successful response, or throws TgError.

import { badRequest, isRecord, optBool, optInt, optJson, optString, TgError, type MessageEntity, type Params } from "./common.js";
import { type ChatState, type SentMessage, type State, type StoredMessage, type TgObject } from "./state.js";
import { sendMessageDraft } from "./drafts.js";
import { CHAT_ACTIONS, formatText, readCommands, readReaction, readReplyMarkup } from "./validate.js";

export type Handler = (state: State, params: Params, seq: number) => unknown;

const NOT_MODIFIED = "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message";

function requireMessageId(params: Params): number {
  const id = optInt(params, "message_id");
  if (id === undefined) throw badRequest("message identifier is not specified");
  return id;
}

function liveMessage(chat: ChatState, id: number): StoredMessage | undefined {
  const stored = chat.messages.get(id);
  return stored && !stored.deleted ? stored : undefined;
}

/** A message as it appears nested in reply_to_message (Telegram does not nest replies further). */
function asReplied(message: TgObject): TgObject {
  const { reply_to_message: _nested, ...rest } = message;
  return rest;
}

/** reply_parameters (or the legacy reply_to_message_id): the replied message, or 400 if it does not exist. */
function replyTarget(state: State, chat: ChatState, params: Params): StoredMessage | undefined {
  const replyParams = optJson(params, "reply_parameters", "reply parameters");
  let id = optInt(params, "reply_to_message_id");
  let allowMissing = optBool(params, "allow_sending_without_reply") ?? false;
  let target = chat;
  if (isRecord(replyParams)) {
    id = optInt(replyParams, "message_id");
    allowMissing = optBool(replyParams, "allow_sending_without_reply") ?? allowMissing;
    if (replyParams.chat_id !== undefined) target = state.resolveChat(replyParams);
  }
  if (id === undefined) return undefined;
  const stored = liveMessage(target, id);
  if (!stored && !allowMissing) throw badRequest("message to be replied not found");
  return stored;
}

const sameContent = (a: { text: string; entities: MessageEntity[] }, b: { text: string; entities: MessageEntity[] }) =>
  a.text === b.text && JSON.stringify(a.entities) === JSON.stringify(b.entities);

function sendMessage(state: State, params: Params, seq: number): TgObject {
  const chat = state.resolveChat(params);
  const { text, entities } = formatText(params);
  const replyMarkup = readReplyMarkup(params);
  const threadId = optInt(params, "message_thread_id");
  const replied = replyTarget(state, chat, params);
  const linkPreview = optJson(params, "link_preview_options", "link preview options");

  const message: TgObject = {
    message_id: state.allocateMessageId(chat),
    from: state.botUser,
    chat: chat.chat,
    date: state.nowSeconds(),
    ...(threadId !== undefined && { message_thread_id: threadId }),
    ...(threadId !== undefined && chat.chat.is_forum === true && { is_topic_message: true }),
    ...(replied && { reply_to_message: asReplied(replied.message) }),
    text,
    ...(entities.length > 0 && { entities }),
    ...(isRecord(linkPreview) && { link_preview_options: linkPreview }),
    // Only inline keyboards are part of the message; reply keyboards belong to the client.
    ...(replyMarkup && "inline_keyboard" in replyMarkup && { reply_markup: replyMarkup }),
  };
  const sent: SentMessage = {
    chat_id: chat.chat.id as number,
    message_id: message.message_id as number,
    text,
    entities,
    ...(optString(params, "parse_mode") && { parse_mode: optString(params, "parse_mode") }),
    ...(threadId !== undefined && { message_thread_id: threadId }),
    ...(replied && { reply_to_message_id: replied.message.message_id as number }),
    ...(replyMarkup && { reply_markup: replyMarkup }),
    params,
    history: [],
    deleted: false,
    seq,
    at: state.now(),
  };
  state.noteMessage(chat, message, true)!.sent = sent;
  state.sent.push(sent);
  state.events.push({
    kind: "message",
    chat_id: sent.chat_id,
    ...(threadId !== undefined && { message_thread_id: threadId }),
    message_id: sent.message_id,
    text,
    seq,
    at: sent.at,
  });
  return message;
}

function editMessageText(state: State, params: Params, seq: number): TgObject {
  if (params.inline_message_id !== undefined) throw badRequest("inline_message_id is not supported by this fake");
  const chat = state.resolveChat(params);
  const messageId = requireMessageId(params);
  const next = formatText(params);
  const replyMarkup = readReplyMarkup(params);
  const stored = liveMessage(chat, messageId);
  if (!stored) throw badRequest("message to edit not found");
  const sent = stored.sent;
  if (!sent) throw badRequest("message can't be edited");
  // Omitting reply_markup removes an inline keyboard, so it is part of the comparison.
  // The Bot API server's rewording of MTProto's MESSAGE_NOT_MODIFIED (tdlib/telegram-bot-api Client::fail_query_with_error).
  if (sameContent(sent, next) && JSON.stringify(sent.reply_markup) === JSON.stringify(replyMarkup)) throw badRequest(NOT_MODIFIED);

  sent.history.push({ text: sent.text, entities: sent.entities });
  sent.text = next.text;
  sent.entities = next.entities;
  sent.params = params;
  const parseMode = optString(params, "parse_mode");
  if (parseMode) sent.parse_mode = parseMode;
  else delete sent.parse_mode;
  if (replyMarkup) sent.reply_markup = replyMarkup;
  else delete sent.reply_markup;

  const { entities: _old, reply_markup: _oldMarkup, ...rest } = stored.message;
  stored.message = {
    ...rest,
    text: next.text,
    ...(next.entities.length > 0 && { entities: next.entities }),
    ...(replyMarkup && "inline_keyboard" in replyMarkup && { reply_markup: replyMarkup }),
    edit_date: state.nowSeconds(),
  };
  state.events.push({ kind: "edit", chat_id: sent.chat_id, message_id: messageId, text: next.text, seq, at: state.now() });
  return stored.message;
}

function sendChatAction(state: State, params: Params, seq: number): true {
  const chat = state.resolveChat(params);
  const action = optString(params, "action");
  if (action === undefined || !CHAT_ACTIONS.has(action)) throw badRequest("wrong parameter action in request");
  const threadId = optInt(params, "message_thread_id");
  state.actions.push({ chat_id: chat.chat.id as number, action, ...(threadId !== undefined && { message_thread_id: threadId }), seq });
  return true;
}

function answerCallbackQuery(state: State, params: Params): true {
  const id = optString(params, "callback_query_id");
  // Unknown and already-answered queries get the same error on Telegram.
  if (id === undefined || state.callbackQueries.get(id) !== false) {
    throw badRequest("query is too old and response timeout expired or query ID is invalid");
  }
  state.callbackQueries.set(id, true);
  return true;
}

function setMessageReaction(state: State, params: Params): true {
  const chat = state.resolveChat(params);
  const messageId = requireMessageId(params);
  readReaction(params);
  if (!liveMessage(chat, messageId)) throw badRequest("message to react not found");
  return true;
}

function deleteMessage(state: State, params: Params, seq: number): true {
  const chat = state.resolveChat(params);
  const messageId = requireMessageId(params);
  const stored = liveMessage(chat, messageId);
  if (!stored) throw badRequest("message to delete not found");
  stored.deleted = true;
  if (stored.sent) stored.sent.deleted = true;
  state.events.push({ kind: "delete", chat_id: chat.chat.id as number, message_id: messageId, seq, at: state.now() });
  return true;
}

function getMe(state: State): TgObject {
  return { ...state.botUser, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false };
}

function dropPending(state: State, params: Params) {
  if (optBool(params, "drop_pending_updates")) state.queue = [];
}

function setWebhook(state: State, params: Params): true {
  const url = optString(params, "url") ?? "";
  dropPending(state, params);
  if (url === "") {
    state.webhook = null; // setWebhook with an empty url removes the webhook
    return true;
  }
  if (!url.startsWith("https://")) throw badRequest("bad webhook: An HTTPS URL must be provided for webhook");
  const secret = optString(params, "secret_token");
  if (secret !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(secret)) throw badRequest("secret token contains unallowed characters");
  state.webhook = { url, ...(secret !== undefined && { secret_token: secret }) };
  return true;
}

function deleteWebhook(state: State, params: Params): true {
  dropPending(state, params);
  state.webhook = null;
  return true;
}

/**
 * getChatMember as the Bot API answers it: a ChatMember object whose `status` is "creator", "administrator" or
 * "member" (fields trimmed to what tells them apart; see the ChatMemberOwner/ChatMemberAdministrator docs).
 */
function getChatMember(state: State, params: Params): TgObject {
  const chatId = Number(params.chat_id);
  const userId = Number(params.user_id);
  if (!Number.isFinite(chatId) || !Number.isFinite(userId)) throw badRequest("chat not found");
  const user = { id: userId, is_bot: false, first_name: `User${userId}` };
  const status = state.admins.get(chatId)?.get(userId);
  if (status === "creator") return { status, user, is_anonymous: true };
  if (status === "administrator") return { status, user, can_be_edited: false, is_anonymous: true, can_manage_chat: true };
  return { status: "member", user };
}

function getWebhookInfo(state: State): TgObject {
  return { url: state.webhook?.url ?? "", has_custom_certificate: false, pending_update_count: state.queue.length };
}

/** Commands are stored per (scope, language_code), like Telegram. */
export function commandsKey(scope: unknown, languageCode: unknown): string {
  return JSON.stringify([scope ?? { type: "default" }, typeof languageCode === "string" ? languageCode : ""]);
}

const keyOf = (params: Params) => commandsKey(optJson(params, "scope", "scope"), params.language_code);

export const METHODS: Record<string, Handler> = {
  getme: getMe,
  sendmessage: sendMessage,
  sendmessagedraft: sendMessageDraft,
  editmessagetext: editMessageText,
  sendchataction: sendChatAction,
  answercallbackquery: answerCallbackQuery,
  setmessagereaction: setMessageReaction,
  deletemessage: deleteMessage,
  setwebhook: setWebhook,
  deletewebhook: deleteWebhook,
  getwebhookinfo: getWebhookInfo,
  getchatmember: getChatMember,
  setmycommands: (state, params) => {
    const commands = readCommands(params);
    state.commands.set(keyOf(params), commands);
    return true;
  },
  getmycommands: (state, params) => state.commands.get(keyOf(params)) ?? [],
  deletemycommands: (state, params) => {
    state.commands.delete(keyOf(params));
    return true;
  },
};

/** The 409 getUpdates answers while a webhook is set. */
export const WEBHOOK_CONFLICT = new TgError(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
