import { GrammyError, type Api } from "grammy";
import type { Logger } from "pino";
import { sessionKey, DeliveryError, type DeliveryReceipt, type OutboundMessage } from "../../src/gateway/index.js";
import { markdownToTelegram, splitFormatted, withHeader, type Formatted } from "./format.js";
import { parseTelegramKey } from "./inbound.js";

const SPEAKER_ICON: Record<string, string> = { skill: "🧩", agent: "🤖" };

/** The formatted chunks of one reply: Markdown rendered, a speaker line for subagents, split to the limit. */
export function renderReply(message: OutboundMessage): Formatted[] {
  const body: Formatted = message.kind === "message" ? markdownToTelegram(message.text) : { text: message.text.trim(), entities: [] };
  const [type, name] = message.agent.split(":");
  const speaker = message.depth >= 2 && name ? withHeader(`${SPEAKER_ICON[type!] ?? "🔹"} ${name}`, body) : body;
  return splitFormatted(speaker);
}

/**
 * 400s that no retry fixes: the chat or topic is gone or closed, or the bot may not write there. (Every 403 is
 * permanent too: blocked by the user, kicked from the group, user deactivated, can't initiate a conversation.)
 */
const PERMANENT_BAD_REQUEST = /chat not found|message thread not found|TOPIC_CLOSED|TOPIC_DELETED|not enough rights to send|have no rights to send/i;

/**
 * What a failed send means for the gateway. Telegram's answers that a plain retry cannot fix become a
 * DeliveryError: a group that became a supergroup (`parameters.migrate_to_chat_id`) → moved; a flood wait the
 * auto-retry plugin did not sit out (past its `maxDelaySeconds` cap it hands the 429 back at once, without waiting;
 * or it ran out of attempts) → retry_after, so the gateway waits as long as Telegram asked; 403 and the 400s above
 * → permanent. Anything else (network, 5xx) is returned as it is, for the gateway's usual backoff.
 */
export function deliveryFailure(error: unknown): unknown {
  if (!(error instanceof GrammyError)) return error;
  const { error_code: code, description, parameters } = error;
  if (parameters.migrate_to_chat_id !== undefined) {
    return new DeliveryError(description, { kind: "moved", to: sessionKey("telegram", parameters.migrate_to_chat_id) });
  }
  if (code === 429 && parameters.retry_after !== undefined) {
    return new DeliveryError(description, { kind: "retry_after", ms: parameters.retry_after * 1000 });
  }
  if (code === 403 || (code === 400 && PERMANENT_BAD_REQUEST.test(description))) {
    return new DeliveryError(description, { kind: "permanent", reason: description });
  }
  return error;
}

/**
 * Sends the chunks not yet sent (a restart resumes at the next one); bad formatting falls back to plain text.
 * `replace`: a message already in the chat (a streamed preview) that becomes chunk 0 by an edit instead of a new
 * message. Failures are thrown as `deliveryFailure` describes them.
 */
export async function sendReply(api: Api, message: OutboundMessage, receipt: DeliveryReceipt, log: Logger, replace?: number): Promise<void> {
  try {
    await sendChunks(api, message, receipt, log, replace);
  } catch (error) {
    throw deliveryFailure(error);
  }
}

const isEntityError = (error: unknown): error is GrammyError =>
  error instanceof GrammyError && error.error_code === 400 && /can't parse entities|entit/i.test(error.description);
/** The preview already shows exactly this (a short reply, streamed whole). */
export const isNotModified = (error: unknown) => error instanceof GrammyError && error.error_code === 400 && /message is not modified/i.test(error.description);
/** The preview is gone or too old to edit (deleted by someone, or over 48 h in some chats): send afresh. */
const isUneditable = (error: unknown) =>
  error instanceof GrammyError && error.error_code === 400 && /message to edit not found|message can't be edited|MESSAGE_ID_INVALID/i.test(error.description);

/** Chunk 0 as an edit of `messageId`; false when that message cannot be edited (the caller sends it instead). */
async function replaceWith(
  api: Api,
  chatId: number,
  messageId: number,
  chunk: Formatted,
  base: Record<string, unknown>,
  message: OutboundMessage,
  log: Logger,
): Promise<boolean> {
  const edit = (entities: boolean) =>
    api.editMessageText(chatId, messageId, chunk.text, { ...base, ...(entities && chunk.entities.length ? { entities: chunk.entities } : {}) });
  try {
    await edit(true).catch((error: unknown) => {
      if (!isEntityError(error)) throw error;
      log.warn({ session: message.sessionKey, outbound: message.id }, "formatting rejected; replacing the streamed message with plain text");
      return edit(false);
    });
    return true;
  } catch (error) {
    if (isNotModified(error)) return true;
    if (isUneditable(error)) {
      log.info(
        { session: message.sessionKey, outbound: message.id, err: (error as GrammyError).description },
        "the streamed message cannot be edited; sending the reply as a new one",
      );
      return false;
    }
    throw error;
  }
}

async function sendChunks(api: Api, message: OutboundMessage, receipt: DeliveryReceipt, log: Logger, replace?: number): Promise<void> {
  const { chatId, threadId } = parseTelegramKey(message.sessionKey);
  const chunks = renderReply(message);
  for (const [index, chunk] of chunks.entries()) {
    if (receipt.sentChunks.has(index)) continue;
    const buttons =
      message.approvalId && index === chunks.length - 1
        ? {
            reply_markup: {
              inline_keyboard: [
                [
                  { text: "✅ Approve", callback_data: `ap:y:${message.approvalId}` },
                  { text: "✖️ Deny", callback_data: `ap:n:${message.approvalId}` },
                ],
              ],
            },
          }
        : {};
    if (index === 0 && replace !== undefined) {
      const edited = await replaceWith(api, chatId, replace, chunk, { link_preview_options: { is_disabled: true }, ...buttons }, message, log);
      if (edited) {
        await receipt.chunkSent(0, String(replace));
        continue;
      }
    }
    const base = {
      ...(threadId !== undefined ? { message_thread_id: threadId } : {}),
      link_preview_options: { is_disabled: true },
      ...buttons,
    };
    let sent;
    try {
      sent = await api.sendMessage(chatId, chunk.text, { ...base, ...(chunk.entities.length ? { entities: chunk.entities } : {}) });
    } catch (error) {
      if (!isEntityError(error)) throw error;
      log.warn({ session: message.sessionKey, outbound: message.id, err: error.description }, "formatting rejected; sending plain text");
      sent = await api.sendMessage(chatId, chunk.text, base);
    }
    await receipt.chunkSent(index, String(sent.message_id));
  }
}
