// sendMessageDraft: streaming a partial message as an ephemeral draft (Bot API 9.3, opened to all bots in 9.5;
// empty text, can_stop and keep_on_stop came later — the shape here is the one @grammyjs/types 5.0 declares).
//
// Where each rule comes from:
// - Parameters, "Returns True", "ephemeral and acts as a temporary 30-second preview - once the output is finalized,
//   you must call sendMessage with the complete message", draft_id "must be non-zero. Changes to drafts with the
//   same identifier are animated. Otherwise, the draft is replaced without animation", text "0-4096 characters after
//   entities parsing. Pass an empty text to show a 'Thinking...' placeholder", can_stop / keep_on_stop ("The draft
//   will still disappear after a short time or if the bot sends a message"): the Bot API reference,
//   core.telegram.org/bots/api#sendmessagedraft (stored copy of /bots/api/methods/sendmessagedraft.md), and the
//   same texts in @grammyjs/types 5.0 methods.d.ts.
// - chat_id is "Unique identifier for the target private chat"; MessageGenerationStopped.chat is a PrivateChat.
//   A group, supergroup or channel answers 400 "Bad Request: TEXTDRAFT_PEER_INVALID": the full body is quoted in
//   nullclaw/nullclaw issue #626 and several public bots test for it ("rejected in supergroups/channels").
// - Order of checks: tdlib/telegram-bot-api Client::process_send_message_draft_query parses text/parse_mode/entities
//   first (get_formatted_text, so entity errors read as for sendMessage), then check_chat ("chat not found"); TDLib
//   (Requests.cpp on_request(sendTextMessageDraft)) sends the draft as a typing action, messages.setTyping with
//   sendMessageTextDraftAction{random_id: draft_id}, so peer and draft_id are judged by Telegram's server and its
//   error code is passed through as "Bad Request: <CODE>" (Client::fail_query_with_error).
//
// ASSUMPTIONS (no stored source has the real answer; change here if Telegram is seen to differ):
// - draft_id 0 (or missing: the server reads it with to_integer, so "" is 0): the real description is unknown;
//   the fake answers 400 DRAFT_ERRORS.draftIdZero, worded after the documentation. Checked after the chat type.
// - text over 4096 UTF-16 units after parsing: "Bad Request: MESSAGE_TOO_LONG", the raw server code, because the
//   "message is too long" rewording in TDLib (MessagesManager) applies to sent messages only.
// - A draft disappears when the bot sends a message to the same chat and thread, or 30 s after its last update.
// - Drafts are not counted by the opt-in flood control unless listed in its `methods` (flood.ts).

import { optBool, optInt, optString, TgError, type MessageEntity, type Params } from "./common.js";
import type { State, TgUpdate } from "./state.js";
import { formatText } from "./validate.js";

/** "acts as a temporary 30-second preview". */
export const DRAFT_TTL_MS = 30_000;

export const DRAFT_ERRORS = {
  /** Any chat but a private one (nullclaw/nullclaw#626). */
  peerInvalid: "Bad Request: TEXTDRAFT_PEER_INVALID",
  /** ASSUMPTION: wording after the documentation; Telegram's real text for draft_id 0 is not known here. */
  draftIdZero: "Bad Request: draft_id must be non-zero",
  /** ASSUMPTION: the raw server code (see the header). */
  tooLong: "Bad Request: MESSAGE_TOO_LONG",
} as const;

export interface DraftUpdate {
  chat_id: number;
  message_thread_id?: number;
  draft_id: number;
  /** After parsing and Telegram's clean-up, like SentMessage.text; "" shows the client's "Thinking..." placeholder. */
  text: string;
  entities: MessageEntity[];
  parse_mode?: string;
  can_stop: boolean;
  keep_on_stop: boolean;
  /** The draft shown just before in this chat and thread had the same draft_id, so the client animated the change. */
  animated: boolean;
  /** Set (to the seq of the stop) when the user pressed the stop button (fake.stopDraft). */
  stopped?: number;
  params: Params;
  /** ApiCall.at of the call, and the fake clock in ms. */
  seq: number;
  at: number;
}

const sameThread = (a: number | undefined, b: number | undefined) => a === b;

/** The draft the user sees now in `chatId` (and topic `threadId`), or null: none, expired, replaced by a message, or stopped. */
export function visibleDraft(state: State, chatId: number, threadId?: number): DraftUpdate | null {
  const last = state.drafts.findLast((d) => d.chat_id === chatId && sameThread(d.message_thread_id, threadId));
  if (!last) return null;
  if (state.now() - last.at >= DRAFT_TTL_MS) return null;
  if (last.stopped !== undefined && !last.keep_on_stop) return null;
  const messageAfter = state.sent.some((m) => m.chat_id === chatId && sameThread(m.message_thread_id, threadId) && m.seq > last.seq);
  return messageAfter ? null : last;
}

export function sendMessageDraft(state: State, params: Params, seq: number): true {
  const { text, entities } = formatText(params, { allowEmpty: true, tooLong: DRAFT_ERRORS.tooLong });
  const canStop = optBool(params, "can_stop") ?? false;
  const keepOnStop = optBool(params, "keep_on_stop") ?? false;
  const chat = state.resolveChat(params);
  if (chat.chat.type !== "private") throw new TgError(400, DRAFT_ERRORS.peerInvalid);
  const draftId = optInt(params, "draft_id") ?? 0;
  if (draftId === 0) throw new TgError(400, DRAFT_ERRORS.draftIdZero);

  const chatId = chat.chat.id as number;
  const threadId = optInt(params, "message_thread_id");
  const shown = visibleDraft(state, chatId, threadId);
  const parseMode = optString(params, "parse_mode");
  const at = state.now();
  state.drafts.push({
    chat_id: chatId,
    ...(threadId !== undefined && { message_thread_id: threadId }),
    draft_id: draftId,
    text,
    entities,
    ...(parseMode && { parse_mode: parseMode }),
    can_stop: canStop,
    keep_on_stop: keepOnStop,
    animated: shown?.draft_id === draftId,
    params,
    seq,
    at,
  });
  state.events.push({ kind: "draft", chat_id: chatId, ...(threadId !== undefined && { message_thread_id: threadId }), draft_id: draftId, text, seq, at });
  return true;
}

/**
 * The user pressed the stop button of the draft they see in `chatId`: Telegram sends the bot a
 * `stopped_message_generation` update (MessageGenerationStopped: chat, message_thread_id?, draft_id). Throws if no
 * visible draft offered the button (can_stop), since the user could not have pressed it.
 */
export function stopDraft(state: State, chatId: number, threadId: number | undefined, seq: number): Omit<TgUpdate, "update_id"> {
  const draft = visibleDraft(state, chatId, threadId);
  if (!draft?.can_stop) throw new Error(`fake Telegram: no visible draft with can_stop in chat ${chatId}${threadId === undefined ? "" : ` thread ${threadId}`}`);
  draft.stopped = seq;
  const chat = state.chats.get(chatId)!.chat;
  return { stopped_message_generation: { chat, ...(threadId !== undefined && { message_thread_id: threadId }), draft_id: draft.draft_id } };
}
