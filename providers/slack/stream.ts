import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import type { DeliveryReceipt, OutboundMessage } from "../../src/gateway/index.js";
import { retryAfterSeconds, withinRateLimit, type RateLimitPolicy } from "./errors.js";
import { parseSlackKey } from "./inbound.js";

/** The Web API tiers: appendStream is tier 4 (100+/min), chat.update tier 3 (50+/min), per workspace. */
const APPEND_EVERY_MS = 600;
const UPDATE_EVERY_MS = 1_500;

/** Timeouts that pace the previews; tests fire them by hand. */
export interface StreamTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemStreamTimers: StreamTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

interface Stream {
  key: string;
  agent: string;
  depth: number;
  /** The text written so far, and how much of it Slack shows. */
  text: string;
  shown: number;
  /** Resets so far: a call that was under way when one came does not count what it sent as shown. */
  resets: number;
  /** The streamed (or posted and updated) message, once it exists. */
  ts: string | null;
  mode: "stream" | "update";
  /** One Slack call at a time per stream, in order. */
  chain: Promise<void>;
  timer: unknown;
  lastFlush: number;
  /** No more previews until then (a rate limit's Retry-After). */
  quietUntil: number;
  failed: boolean;
  /** No more text: its turn ended, or another agent speaks now. */
  sealed: boolean;
  /** Taken over by its reply, or given up: no more calls. */
  closed: boolean;
}

export interface SlackStreamsDeps {
  client: WebClient;
  /** The user the reply is for (chat.startStream needs them outside DMs), as `{ user, team }`. */
  recipient(sessionKey: string): Promise<{ user: string; team: string } | null>;
  /** The session's replies committed but not yet claimed for delivery. */
  pending(sessionKey: string): Promise<Array<{ agent: string; depth: number; kind: string }>>;
  rateLimit: RateLimitPolicy;
  log: Logger;
  now: () => number;
  timers: StreamTimers;
}

/**
 * Replies shown while they are written. In a thread (assistant threads included), Slack's streaming methods
 * (chat.startStream / appendStream / stopStream); elsewhere (a DM outside threads) one message posted and updated at
 * a rate-limit-safe pace. A preview: when its reply is delivered it takes the streamed message's place (stopped, then
 * made exact by chat.update), so the reply appears once. Anything else delivered meanwhile (a notice, another
 * agent's reply) goes beside it, and the stream goes on. A streamed message whose reply never comes (a turn cut off
 * or failed) is stopped and deleted, never left half-written.
 */
export class SlackStreams {
  /**
   * Per session, the streams not yet taken over by their reply, oldest first: a turn may stream several (the words
   * before a tool call, then a skill's reply), delivered in order after them. Only the newest one takes text.
   */
  private readonly live = new Map<string, Stream[]>();
  /** Sessions whose turn runs now. */
  private readonly running = new Set<string>();

  constructor(private readonly deps: SlackStreamsDeps) {}

  /** A turn starts: streams of an earlier turn still here never got their reply (cut off), so they go. */
  turnStarted(sessionKey: string): void {
    this.running.add(sessionKey);
    for (const left of this.live.get(sessionKey) ?? []) void this.abandon(left);
  }

  /** The turn ended: its replies are delivered next, so the streams take no more text. */
  turnEnded(sessionKey: string): void {
    this.running.delete(sessionKey);
    for (const stream of this.live.get(sessionKey) ?? []) this.seal(stream);
  }

  write(sessionKey: string, delta: { agent: string; depth: number; text: string }): void {
    const queue = this.live.get(sessionKey) ?? [];
    let stream = queue.at(-1);
    if (!stream || stream.sealed || stream.agent !== delta.agent || stream.depth !== delta.depth) {
      // Another agent speaks now (a skill took over): the last stream waits for its own reply, unchanged.
      if (stream) this.seal(stream);
      stream = this.open(sessionKey, delta.agent, delta.depth);
      queue.push(stream);
      this.live.set(sessionKey, queue);
    }
    stream.text += delta.text;
    this.schedule(stream);
  }

  /**
   * The model call writing this agent's reply failed midway and starts over. A streamed message cannot take text
   * back, so it is stopped and deleted, and the next pieces start a new one; a posted-and-updated message is emptied
   * in place, and the next update shows the new reply from its beginning.
   */
  reset(sessionKey: string, who: { agent: string; depth: number }): void {
    const stream = this.live.get(sessionKey)?.at(-1);
    if (!stream || stream.sealed || stream.agent !== who.agent || stream.depth !== who.depth) return;
    if (stream.mode === "stream") return void this.abandon(stream);
    stream.text = "";
    stream.shown = 0;
    stream.resets += 1;
  }

  /**
   * Delivers `parts` (the rendered reply) into the streamed message of the same agent when there is one: the stream
   * is stopped and the message made exact; returns the index of the first part still to post (1), or 0. Anything
   * else (a notice, an error, a reply nothing streamed) is posted beside the live streams; once the turn is over (or
   * failed: an error), streams whose reply will not come any more are deleted. Called within the gateway's delivery
   * pass, which sends a session's replies one at a time and in order: no reply of this session is on its way now.
   */
  async finish(message: OutboundMessage, parts: string[], receipt: DeliveryReceipt): Promise<number> {
    const key = message.sessionKey;
    const queue = this.live.get(key) ?? [];
    const takesOver = message.kind === "message" && !message.approvalId && !receipt.sentChunks.has(0);
    const index = takesOver ? queue.findIndex((s) => s.agent === message.agent && s.depth === message.depth) : -1;
    const stream = queue[index];
    if (!stream) {
      if (queue.length > 0 && (!this.running.has(key) || message.kind === "error")) await this.settle(key);
      return 0;
    }
    // Replies come in order: streams before this one never got theirs (a model call that failed mid-reply).
    for (const earlier of queue.slice(0, index)) await this.abandon(earlier);
    this.close(stream);
    await stream.chain;
    if (await this.becomeReply(stream, parts[0] ?? "")) {
      await receipt.chunkSent(0, stream.ts!);
      return 1;
    }
    return 0;
  }

  /** Makes the streamed message read `text` (the formatted reply); false (and the half message deleted) if it cannot. */
  private async becomeReply(stream: Stream, text: string): Promise<boolean> {
    if (stream.ts === null) return false;
    const { client, rateLimit } = this.deps;
    const { channel } = parseSlackKey(stream.key);
    const ts = stream.ts;
    try {
      // Already ended (a user's Stop, expiry, or a failed append) answers message_not_in_streaming_state: fine.
      if (stream.mode === "stream") await withinRateLimit(() => client.chat.stopStream({ channel, ts }), rateLimit).catch(() => {});
      // The streamed text is the model's markdown as written; the delivered part is the formatted reply.
      await withinRateLimit(() => client.chat.update({ channel, ts, text, mrkdwn: true } as Parameters<WebClient["chat"]["update"]>[0]), rateLimit);
      return true;
    } catch (error) {
      this.deps.log.warn({ err: error, session: stream.key }, "could not turn the streamed message into the reply; posting the reply instead");
      await this.remove(stream);
      return false;
    }
  }

  /** Streams of the session whose reply will never come (none is pending for their agent) are deleted. */
  private async settle(key: string): Promise<void> {
    const streams = [...(this.live.get(key) ?? [])];
    const pending = await this.deps.pending(key).catch(() => null);
    if (!pending) return;
    for (const stream of streams) {
      if (!pending.some((o) => o.kind === "message" && o.agent === stream.agent && o.depth === stream.depth)) await this.abandon(stream);
    }
  }

  private open(key: string, agent: string, depth: number): Stream {
    const { threadTs } = parseSlackKey(key);
    return {
      key,
      agent,
      depth,
      text: "",
      shown: 0,
      resets: 0,
      ts: null,
      mode: threadTs ? "stream" : "update",
      chain: Promise.resolve(),
      timer: null,
      lastFlush: 0,
      quietUntil: 0,
      failed: false,
      sealed: false,
      closed: false,
    };
  }

  private seal(stream: Stream): void {
    stream.sealed = true;
    this.stopTimer(stream);
  }

  /** Out of the session's streams: no more calls for it here. */
  private close(stream: Stream): void {
    stream.closed = true;
    this.seal(stream);
    const queue = (this.live.get(stream.key) ?? []).filter((s) => s !== stream);
    if (queue.length > 0) this.live.set(stream.key, queue);
    else this.live.delete(stream.key);
  }

  /** A stream whose reply never came: stopped and deleted. */
  private async abandon(stream: Stream): Promise<void> {
    if (stream.closed) return;
    this.close(stream);
    await stream.chain;
    await this.remove(stream);
  }

  private async remove(stream: Stream): Promise<void> {
    if (stream.ts === null) return;
    const { client, rateLimit } = this.deps;
    const { channel } = parseSlackKey(stream.key);
    const ts = stream.ts;
    if (stream.mode === "stream") await withinRateLimit(() => client.chat.stopStream({ channel, ts }), rateLimit).catch(() => {});
    await withinRateLimit(() => client.chat.delete({ channel, ts }), rateLimit).catch((error: unknown) =>
      this.deps.log.warn({ err: error, session: stream.key }, "could not delete a streamed message whose reply never came"),
    );
  }

  private stopTimer(stream: Stream): void {
    if (stream.timer !== null) this.deps.timers.clearTimeout(stream.timer);
    stream.timer = null;
  }

  private schedule(stream: Stream): void {
    if (stream.timer !== null || stream.failed || stream.sealed) return;
    const { now } = this.deps;
    const every = stream.mode === "stream" ? APPEND_EVERY_MS : UPDATE_EVERY_MS;
    // The first piece goes out at once (the user sees the reply start); later ones at the method's pace.
    const wait = stream.lastFlush === 0 ? 0 : Math.max(stream.quietUntil - now(), stream.lastFlush + every - now(), 0);
    if (wait === 0) return this.flush(stream);
    stream.timer = this.deps.timers.setTimeout(() => {
      stream.timer = null;
      if (!stream.sealed) this.flush(stream);
    }, wait);
  }

  private flush(stream: Stream): void {
    stream.lastFlush = this.deps.now();
    stream.chain = stream.chain
      .then(() => this.send(stream))
      .catch((error: unknown) => {
        const wait = retryAfterSeconds(error);
        if (wait !== null) {
          stream.quietUntil = this.deps.now() + wait * 1000;
          return;
        }
        stream.failed = true;
        this.deps.log.debug({ err: error, session: stream.key }, "could not show the reply as it is written; it comes whole");
      });
  }

  private async send(stream: Stream): Promise<void> {
    const text = stream.text;
    const resets = stream.resets;
    // Nothing new; or nothing yet of a reply that starts over (Slack refuses an empty message, and the old one stays).
    if (stream.closed || text.length === stream.shown || text === "") return;
    const { client } = this.deps;
    const { channel, threadTs } = parseSlackKey(stream.key);
    if (stream.mode === "update") {
      if (stream.ts) await client.chat.update({ channel, ts: stream.ts, text });
      else stream.ts = (await client.chat.postMessage({ channel, text, unfurl_links: false })).ts ?? null;
    } else if (stream.ts) {
      await client.chat.appendStream({ channel, ts: stream.ts, markdown_text: text.slice(stream.shown) });
    } else {
      const recipient = channel.startsWith("D") ? null : await this.deps.recipient(stream.key);
      const started = await client.chat.startStream({
        channel,
        thread_ts: threadTs!,
        markdown_text: text,
        ...(recipient ? { recipient_user_id: recipient.user, recipient_team_id: recipient.team } : {}),
      });
      stream.ts = started.ts ?? null;
    }
    if (stream.resets === resets) stream.shown = text.length;
  }
}
