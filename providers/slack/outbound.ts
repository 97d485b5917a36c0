import type { WebClient } from "@slack/web-api";
import type { DeliveryReceipt, OutboundMessage } from "../../src/gateway/index.js";
import { escapeMrkdwn, markdownToMrkdwn, splitMrkdwn } from "./format.js";
import { deliveryFailure, withinRateLimit, type RateLimitPolicy } from "./errors.js";
import { parseSlackKey } from "./inbound.js";
import type { SlackStreams } from "./stream.js";

const SPEAKER_ICON: Record<string, string> = { skill: "🧩", agent: "🤖" };

/** The mrkdwn parts of one reply: rendered, labelled with a subagent's name, split below Slack's limits. */
export function renderReply(message: OutboundMessage): string[] {
  const body = message.kind === "message" ? markdownToMrkdwn(message.text) : escapeMrkdwn(message.text);
  const [type, name] = message.agent.split(":");
  const labelled = message.depth >= 2 && name ? `*${SPEAKER_ICON[type!] ?? "🔹"} ${name}*\n${body}` : body;
  return splitMrkdwn(labelled);
}

/**
 * Posts the parts not yet posted, in the conversation's thread; a restart resumes at the next part. A failure Slack
 * calls final (not_in_channel, is_archived, …) or a rate limit beyond the retry budget is thrown as a DeliveryError.
 */
export async function postReply(
  client: WebClient,
  message: OutboundMessage,
  receipt: DeliveryReceipt,
  rateLimit: RateLimitPolicy,
  streams?: SlackStreams,
): Promise<void> {
  const { channel, threadTs } = parseSlackKey(message.sessionKey);
  const parts = renderReply(message);
  // The reply was shown while it was written: the streamed message becomes its first part (a notice goes beside it).
  const streamed = streams ? await streams.finish(message, parts, receipt) : 0;
  try {
    for (const [index, text] of parts.entries()) {
      if (index < streamed || receipt.sentChunks.has(index)) continue;
      const posted = await withinRateLimit(
        () =>
          client.chat.postMessage({
            channel,
            text,
            mrkdwn: true,
            unfurl_links: false,
            ...(threadTs ? { thread_ts: threadTs } : {}),
            ...(message.approvalId && index === parts.length - 1 ? { blocks: approvalBlocks(text, message.approvalId) } : {}),
          }),
        rateLimit,
      );
      await receipt.chunkSent(index, posted.ts ?? "");
    }
  } catch (error) {
    throw deliveryFailure(error, threadTs ? `${channel} (thread ${threadTs})` : channel);
  }
}

/** The question with Approve / Deny buttons; the buttons carry the approval id. */
export function approvalBlocks(text: string, approvalId: string) {
  return [
    { type: "section", text: { type: "mrkdwn", text: text.slice(0, 3000) } },
    {
      type: "actions",
      block_id: `approval_${approvalId}`,
      elements: [
        { type: "button", action_id: "switchboard_approve", style: "primary", text: { type: "plain_text", text: "Approve" }, value: approvalId },
        { type: "button", action_id: "switchboard_deny", style: "danger", text: { type: "plain_text", text: "Deny" }, value: approvalId },
      ],
    },
  ];
}
