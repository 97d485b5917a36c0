import { GrammyError, type Api } from "grammy";
import type { Logger } from "pino";
import { sessionKey } from "../../src/gateway/session-key.js";
import { DeliveryError, type DeliveryReceipt, type OutboundMessage } from "../../src/gateway/types.js";
import { markdownToTelegram, splitFormatted, withHeader, type Formatted } from "./format.js";
import { parseTelegramKey } from "./inbound.js";

const SPEAKER_ICON: Record<string, string> = { skill: "🧩", agent: "🤖" };

/** The formatted chunks of one reply: Markdown rendered, a speaker line for subagents, split to the limit. */
export function renderReply(message: OutboundMessage): Formatted[] {
  const body: Formatted =
    message.kind === "message" ? markdownToTelegram(message.text) : { text: message.text.trim(), entities: [] };
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
 * Failures are thrown as `deliveryFailure` describes them.
 */
export async function sendReply(api: Api, message: OutboundMessage, receipt: DeliveryReceipt, log: Logger): Promise<void> {
  try {
    await sendChunks(api, message, receipt, log);
  } catch (error) {
    throw deliveryFailure(error);
  }
}

async function sendChunks(api: Api, message: OutboundMessage, receipt: DeliveryReceipt, log: Logger): Promise<void> {
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
    const base = {
      ...(threadId !== undefined ? { message_thread_id: threadId } : {}),
      link_preview_options: { is_disabled: true },
      ...buttons,
    };
    let sent;
    try {
      sent = await api.sendMessage(chatId, chunk.text, { ...base, ...(chunk.entities.length ? { entities: chunk.entities } : {}) });
    } catch (error) {
      if (!(error instanceof GrammyError && error.error_code === 400 && /can't parse entities|entit/i.test(error.description))) {
        throw error;
      }
      log.warn({ session: message.sessionKey, outbound: message.id, err: error.description }, "formatting rejected; sending plain text");
      sent = await api.sendMessage(chatId, chunk.text, base);
    }
    await receipt.chunkSent(index, String(sent.message_id));
  }
}
