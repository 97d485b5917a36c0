import { GrammyError, type Api } from "grammy";
import type { Logger } from "pino";
import type { DeliveryReceipt, OutboundMessage } from "../../src/gateway/types.js";
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

/** Sends the chunks not yet sent (a restart resumes at the next one); bad formatting falls back to plain text. */
export async function sendReply(api: Api, message: OutboundMessage, receipt: DeliveryReceipt, log: Logger): Promise<void> {
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
    receipt.chunkSent(index, String(sent.message_id));
  }
}
