import type { WebClient } from "@slack/web-api";
import type { OutboundFile } from "../../src/files/types.js";
import { deliveryFailure, withinRateLimit, type RateLimitPolicy } from "./errors.js";
import { parseSlackKey } from "./inbound.js";

// A file an agent sends, uploaded the files v2 way (files.getUploadURLExternal → POST the bytes to the upload URL →
// files.completeUploadExternal into the conversation's channel and thread), through the SDK's filesUploadV2. The
// caption is the upload's initial comment. Needs the files:write scope; Slack's refusals become DeliveryErrors
// like a reply's.

export async function sendSlackFile(client: WebClient, file: OutboundFile, rateLimit: RateLimitPolicy): Promise<void> {
  const { channel, threadTs } = parseSlackKey(file.sessionKey);
  try {
    await withinRateLimit(() => {
      const upload = {
        channel_id: channel,
        file: file.bytes,
        filename: file.name,
        title: file.name,
        ...(file.caption !== undefined ? { initial_comment: file.caption } : {}),
      };
      return client.filesUploadV2(threadTs ? { ...upload, thread_ts: threadTs } : upload);
    }, rateLimit);
  } catch (error) {
    throw deliveryFailure(error, threadTs ? `${channel} (thread ${threadTs})` : channel);
  }
}
