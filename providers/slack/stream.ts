import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import type { DeliveryReceipt, OutboundMessage } from "../../src/gateway/types.js";
import { retryAfterSeconds } from "./errors.js";
import { parseSlackKey } from "./inbound.js";

/** The Web API tiers: appendStream is tier 4 (100+/min), chat.update tier 3 (50+/min), per workspace. */
const APPEND_EVERY_MS = 600;
const UPDATE_EVERY_MS = 1_500;

interface Stream {
  agent: string;
  /** The text written so far, and how much of it Slack shows. */
  text: string;
  shown: number;
  /** The streamed (or posted and updated) message, once it exists. */
  ts: string | null;
  mode: "stream" | "update";
  /** One Slack call at a time per stream, in order. */
  chain: Promise<void>;
  timer: NodeJS.Timeout | null;
  lastFlush: number;
  /** No more previews until then (a rate limit's Retry-After). */
  quietUntil: number;
  failed: boolean;
}

export interface StreamTarget {
  /** The user the reply is for (chat.startStream needs them outside DMs), as `{ user, team }`. */
  recipient(sessionKey: string): Promise<{ user: string; team: string } | null>;
}

/**
 * Replies shown while they are written. In a thread (assistant threads included), Slack's streaming methods
 * (chat.startStream / appendStream / stopStream); elsewhere (a DM outside threads) one message posted and updated at
 * a rate-limit-safe pace. A preview: when the whole reply is delivered it takes the streamed message's place (stopped,
 * then corrected by chat.update if it differs), so the reply appears once. A preview that fails is dropped quietly.
 */
export class SlackStreams {
  private readonly streams = new Map<string, Stream>();

  constructor(
    private readonly client: WebClient,
    private readonly target: StreamTarget,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  write(sessionKey: string, delta: { agent: string; text: string }): void {
    let stream = this.streams.get(sessionKey);
    if (stream && stream.agent !== delta.agent) {
      this.drop(sessionKey);
      stream = undefined;
    }
    if (!stream) {
      const { threadTs } = parseSlackKey(sessionKey);
      stream = { agent: delta.agent, text: "", shown: 0, ts: null, mode: threadTs ? "stream" : "update", chain: Promise.resolve(), timer: null, lastFlush: 0, quietUntil: 0, failed: false };
      this.streams.set(sessionKey, stream);
    }
    stream.text += delta.text;
    this.schedule(sessionKey, stream);
  }

  /**
   * Delivers `parts` (the rendered reply) in place of the streamed message when there is one for this agent: the
   * stream is stopped and the message made exact; returns the index of the first part still to post, or 0.
   */
  async finish(message: OutboundMessage, parts: string[], receipt: DeliveryReceipt): Promise<number> {
    const stream = this.streams.get(message.sessionKey);
    if (!stream || stream.agent !== message.agent || receipt.sentChunks.has(0)) {
      if (stream) this.drop(message.sessionKey);
      return 0;
    }
    this.streams.delete(message.sessionKey);
    if (stream.timer) clearTimeout(stream.timer);
    await stream.chain;
    if (stream.failed || !stream.ts) return 0;
    const { channel } = parseSlackKey(message.sessionKey);
    try {
      if (stream.mode === "stream") await this.client.chat.stopStream({ channel, ts: stream.ts });
      // The streamed text is the model's markdown as written; the delivered part is the formatted reply.
      await this.client.chat.update({ channel, ts: stream.ts, text: parts[0] ?? "", mrkdwn: true } as Parameters<WebClient["chat"]["update"]>[0]);
      await receipt.chunkSent(0, stream.ts);
      return 1;
    } catch (error) {
      this.log.debug({ err: error, session: message.sessionKey }, "could not turn the streamed message into the reply; posting it instead");
      return 0;
    }
  }

  /** The turn ended without this stream's reply (cut off, failed): stop it so Slack does not leave it open. */
  drop(sessionKey: string): void {
    const stream = this.streams.get(sessionKey);
    if (!stream) return;
    this.streams.delete(sessionKey);
    if (stream.timer) clearTimeout(stream.timer);
    if (stream.mode !== "stream") return;
    const { channel } = parseSlackKey(sessionKey);
    void stream.chain.then(() => (stream.ts && !stream.failed ? this.client.chat.stopStream({ channel, ts: stream.ts }) : undefined)).catch(() => {});
  }

  private schedule(sessionKey: string, stream: Stream): void {
    if (stream.timer || stream.failed) return;
    const every = stream.mode === "stream" ? APPEND_EVERY_MS : UPDATE_EVERY_MS;
    // The first piece goes out at once (the user sees the reply start); later ones at the method's pace.
    const wait = stream.lastFlush === 0 ? 0 : Math.max(stream.quietUntil - this.now(), stream.lastFlush + every - this.now(), 0);
    if (wait === 0) return this.flush(sessionKey, stream);
    stream.timer = setTimeout(() => {
      stream.timer = null;
      if (this.streams.get(sessionKey) === stream) this.flush(sessionKey, stream);
    }, wait);
    stream.timer.unref();
  }

  private flush(sessionKey: string, stream: Stream): void {
    stream.lastFlush = this.now();
    stream.chain = stream.chain.then(() => this.send(sessionKey, stream)).catch((error: unknown) => {
      const wait = retryAfterSeconds(error);
      if (wait !== null) {
        stream.quietUntil = this.now() + wait * 1000;
        return;
      }
      stream.failed = true;
      this.log.debug({ err: error, session: sessionKey }, "could not show the reply as it is written; it comes whole");
    });
  }

  private async send(sessionKey: string, stream: Stream): Promise<void> {
    const text = stream.text;
    if (text.length === stream.shown) return;
    const { channel, threadTs } = parseSlackKey(sessionKey);
    if (stream.mode === "update") {
      if (stream.ts) await this.client.chat.update({ channel, ts: stream.ts, text });
      else stream.ts = (await this.client.chat.postMessage({ channel, text, unfurl_links: false })).ts ?? null;
    } else if (stream.ts) {
      await this.client.chat.appendStream({ channel, ts: stream.ts, markdown_text: text.slice(stream.shown) });
    } else {
      const recipient = channel.startsWith("D") ? null : await this.target.recipient(sessionKey);
      const started = await this.client.chat.startStream({
        channel,
        thread_ts: threadTs!,
        markdown_text: text,
        ...(recipient ? { recipient_user_id: recipient.user, recipient_team_id: recipient.team } : {}),
      });
      stream.ts = started.ts ?? null;
    }
    stream.shown = text.length;
  }
}
