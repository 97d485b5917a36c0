// Replies shown as they are written. Private chats get a draft (sendMessageDraft: an ephemeral preview that the
// reply itself replaces); where Telegram has no drafts (groups, topics, a chat or a Bot API server that refuses them:
// draft-support.ts) one message is sent with the text so far and edited in place, and the reply becomes that message
// (an edit, recorded as its chunk 0). Anything else delivered meanwhile (a notice) goes beside the preview, which
// stays live. A preview never fails a reply: its errors are logged, and a 429 pauses it as long as Telegram asks.
import { GrammyError } from "grammy";
import type { DeliveryReceipt, OutboundMessage } from "../../src/gateway/index.js";
import { DraftSupport } from "./draft-support.js";
import type { Formatted } from "./format.js";
import { parseTelegramKey } from "./inbound.js";
import { isNotModified, renderReply, sendReply } from "./outbound.js";
import { PREVIEW_EVERY_MS, parseOrphans, type Live, type Orphans, type ReplyStreamsDeps } from "./stream-parts.js";

export { systemStreamClock, type StreamClock, type StreamingMode } from "./stream-parts.js";

export class ReplyStreams {
  /**
   * Per session, the previews not yet taken over by their reply, oldest first: a turn may stream several (the
   * text before a tool call, then a subagent's reply), and their replies are delivered after the turn, in order.
   * Only the newest one takes deltas.
   */
  private readonly live = new Map<string, Live[]>();
  /** Sessions whose turn runs now (between `working` and its stop). */
  private readonly running = new Set<string>();
  private readonly orphans = new Map<string, Orphans>();
  /** Sessions with streamed messages recorded with the gateway (by this process or the one before). */
  private readonly recorded = new Set<string>();
  private readonly drafts: DraftSupport;
  private nextDraftId = 1;

  constructor(private readonly deps: ReplyStreamsDeps) {
    this.drafts = new DraftSupport(deps.log);
  }

  /**
   * Streamed messages a previous process remembered (read once, at start, before replies can go out): the first
   * reply (or edit stream) in that session takes them over.
   */
  adopt(sessionKey: string, data: string): void {
    const orphans = parseOrphans(data);
    this.recorded.add(sessionKey);
    if (orphans) this.orphans.set(sessionKey, orphans);
  }

  /** A turn starts: previews of an earlier turn still here never got their reply (cut off), so they go. */
  turnStarted(sessionKey: string): void {
    this.running.add(sessionKey);
    for (const left of this.live.get(sessionKey) ?? []) void this.abandon(left);
  }

  /** The turn ended; its replies are delivered next, so the previews stop here. */
  turnEnded(sessionKey: string): void {
    this.running.delete(sessionKey);
    for (const live of this.live.get(sessionKey) ?? []) this.seal(live);
  }

  delta(sessionKey: string, delta: { agent: string; depth: number; text: string }): void {
    if (this.deps.mode === "off") return;
    const queue = this.live.get(sessionKey) ?? [];
    let live = queue.at(-1);
    if (!live || live.agent !== delta.agent || live.depth !== delta.depth || live.ended) {
      // Another agent speaks now (a skill took over): the last preview waits for its own reply, unchanged.
      if (live) this.seal(live);
      live = this.open(sessionKey, delta.agent, delta.depth);
      queue.push(live);
      this.live.set(sessionKey, queue);
    }
    live.text += delta.text;
    this.pump(live);
  }

  /**
   * The model call writing this agent's reply failed midway and starts over: its preview is emptied, so the next
   * pieces rewrite it from the beginning (the draft, or the edited message, stays where it is and shows the new
   * reply as it comes). Nothing is sent for the reset itself: the old text stays until the first new piece replaces it.
   */
  reset(sessionKey: string, who: { agent: string; depth: number }): void {
    const live = this.live.get(sessionKey)?.at(-1);
    if (!live || live.agent !== who.agent || live.depth !== who.depth || live.closed) return;
    live.text = "";
  }

  /**
   * Delivers a reply: in edit mode, the oldest preview of the same session and agent — or the message a previous
   * process streamed — becomes its first chunk; otherwise it is sent as usual (a draft goes by itself).
   */
  async deliver(message: OutboundMessage, receipt: DeliveryReceipt): Promise<void> {
    const key = message.sessionKey;
    // Nothing streamed here: the plain path, exactly as without streaming.
    if (!this.live.has(key) && !this.orphans.has(key) && !this.recorded.has(key)) return sendReply(this.deps.api, message, receipt, this.deps.log);
    const queue = this.live.get(key) ?? [];
    const index = message.kind === "message" ? queue.findIndex((l) => l.agent === message.agent && l.depth === message.depth) : -1;
    const live = index >= 0 ? queue[index] : undefined;
    let replace: number | undefined;
    let adoptedOrphan = false;
    if (live) {
      // Replies come in order: previews before this one never got theirs (a model call that failed mid-reply).
      for (const earlier of queue.slice(0, index)) await this.abandon(earlier);
      this.seal(live);
      live.closed = true;
      await live.busy;
      if (live.via === "edit" && live.messageId !== null) replace = live.messageId;
    } else if (queue.length > 0 && (!this.running.has(key) || message.kind === "error")) {
      // The turn is over (or failed: an error can come while it still winds down): a preview whose agent has no reply
      // left to deliver was cut off; it goes. (This runs within the gateway's delivery pass, which sends a session's
      // replies one at a time: none of them is on its way now.)
      const pending = await this.deps.pending(key).catch(() => null);
      if (pending) {
        for (const left of queue) {
          if (!pending.some((o) => o.kind === "message" && o.agent === left.agent && o.depth === left.depth)) await this.abandon(left);
        }
      }
    }
    if (replace === undefined && !receipt.sentChunks.has(0)) {
      // The oldest message a previous process streamed here becomes this reply.
      replace = await this.takeOrphan(key);
      adoptedOrphan = replace !== undefined;
    }
    if (receipt.sentChunks.has(0)) replace = undefined; // a retry after chunk 0 went out: the rest goes on below
    // Forgotten before the edit: a crash right after it must not leave the next reply editing this one.
    await this.sync(key);
    let replaced = false;
    const journal: DeliveryReceipt = {
      sentChunks: receipt.sentChunks,
      chunkSent: async (chunk, platformMessageId) => {
        await receipt.chunkSent(chunk, platformMessageId);
        if (chunk === 0) replaced = true;
      },
    };
    try {
      await sendReply(this.deps.api, message, journal, this.deps.log, replace);
    } catch (error) {
      // Delivered later (the outbox retries): still the message to take over, after a restart too.
      if (replace !== undefined && !replaced) {
        if (live) live.closed = false;
        else if (adoptedOrphan) this.putBackOrphan(key, replace);
        await this.sync(key);
      }
      throw error;
    }
    if (live) this.drop(live);
    if (!this.running.has(key) && this.orphans.has(key)) await this.settleOrphans(key);
  }

  /**
   * Called at start, after `adopt` and once replies can be delivered, for each session a previous process left
   * streamed messages in: when nothing there will be delivered or run again, they will never be taken over, so they
   * are deleted; otherwise they stay remembered until a reply takes them over. (Not through the gateway's
   * clearIndicator: the gateway forgets the row as soon as that returns, so a process dying again before the
   * resumed turn streamed would leave the half message in the chat for good, beside the reply.)
   */
  async settleRemembered(sessionKey: string): Promise<void> {
    if (this.orphans.has(sessionKey)) await this.settleOrphans(sessionKey);
    else await this.sync(sessionKey); // taken over already, or nothing usable was remembered: forgotten unless live
  }

  /** Deletes what a previous process streamed in `key` if no reply or turn there can take it over any more. */
  private async settleOrphans(key: string): Promise<void> {
    const [pending, unfinished] = await Promise.all([this.deps.pending(key), this.deps.unfinished(key)]).catch(() => [null, null]);
    // (Not `!unfinished`: 0 is the answer that lets them go; null is a store that could not say.)
    if (pending === null || unfinished === null || pending.length > 0 || unfinished > 0) return;
    // Only what is still remembered: another replica that ran the turn may have made one of them its reply.
    const still = await this.deps.remembered(key).then(
      (data) => new Set(parseOrphans(data ?? "")?.messageIds ?? []),
      () => null,
    );
    const left = this.orphans.get(key);
    if (still === null || !left) return;
    this.orphans.delete(key);
    for (const id of left.messageIds.filter((m) => still.has(m))) await this.remove(key, left.chatId, id);
    await this.sync(key);
  }

  /**
   * The oldest message a previous process streamed here, to become this reply. Only one the store still remembers:
   * with several replicas, every one adopted the rows at its start, and the one that ran the resumed turn may have
   * made the message its reply since (an edit over that answer would replace it).
   */
  private async takeOrphan(key: string): Promise<number | undefined> {
    if (!this.orphans.has(key)) return undefined;
    const still = await this.deps.remembered(key).then(
      (data) => new Set(parseOrphans(data ?? "")?.messageIds ?? []),
      () => null,
    );
    const orphans = this.orphans.get(key);
    if (still === null || !orphans || orphans.chatId !== parseTelegramKey(key).chatId) return undefined;
    orphans.messageIds = orphans.messageIds.filter((m) => still.has(m));
    const id = orphans.messageIds.shift();
    if (orphans.messageIds.length === 0) this.orphans.delete(key);
    return id;
  }

  private putBackOrphan(key: string, messageId: number): void {
    const orphans = this.orphans.get(key) ?? { chatId: parseTelegramKey(key).chatId, messageIds: [] };
    orphans.messageIds.unshift(messageId);
    this.orphans.set(key, orphans);
  }

  private open(key: string, agent: string, depth: number): Live {
    const { chatId, threadId } = parseTelegramKey(key);
    const drafts = this.deps.mode === "draft" && this.drafts.available(chatId, threadId);
    const live: Live = {
      key,
      chatId,
      threadId,
      agent,
      depth,
      via: drafts ? "draft" : "edit",
      draftId: this.nextDraftId++,
      text: "",
      shown: "",
      messageId: null,
      nextAt: -Infinity,
      running: false,
      busy: Promise.resolve(),
      timer: null,
      ended: false,
      closed: false,
    };
    return live;
  }

  /** Sends the newest text if the pace allows, else once it does; one request at a time per stream. */
  private pump(live: Live): void {
    // Nothing new to show; nor anything at all after a reset, until the new reply's first words (the old stay).
    if (live.closed || live.ended || live.running || live.text.trim() === live.shown || live.text.trim() === "") return;
    const wait = live.nextAt - this.deps.clock.now();
    if (wait > 0) {
      live.timer ??= this.deps.clock.setTimeout(() => {
        live.timer = null;
        this.pump(live);
      }, wait);
      return;
    }
    live.running = true;
    live.busy = this.update(live)
      .catch((error: unknown) => this.deps.log.debug({ err: error, session: live.key }, "could not update the streamed preview"))
      .finally(() => {
        live.running = false;
        this.pump(live);
      });
  }

  private async update(live: Live): Promise<void> {
    const text = live.text.trim();
    // As the reply will look: formatted, with the speaker line of a subagent, cut to one message.
    const chunk = renderReply({ id: "", sessionKey: live.key, requestId: null, agent: live.agent, depth: live.depth, text, kind: "message" })[0];
    if (!chunk || chunk.text === "") return;
    const { previewApi: api, clock } = this.deps;
    const entities = chunk.entities.length ? { entities: chunk.entities } : {};
    // Opened before this chat (or another: the server has no drafts) turned out to refuse them.
    if (live.via === "draft" && !this.drafts.available(live.chatId, live.threadId)) live.via = "edit";
    try {
      if (live.via === "draft") {
        await api.sendMessageDraft(live.chatId, live.draftId, chunk.text, entities);
        live.nextAt = clock.now() + PREVIEW_EVERY_MS.draft;
      } else {
        await this.edit(live, chunk.text, entities);
        live.nextAt = clock.now() + (live.chatId > 0 ? PREVIEW_EVERY_MS.editPrivate : PREVIEW_EVERY_MS.editGroup);
      }
      live.shown = text;
    } catch (error) {
      if (!(error instanceof GrammyError)) {
        live.nextAt = clock.now() + PREVIEW_EVERY_MS.editPrivate; // a network failure: not again at once
        throw error;
      }
      if (error.error_code === 429) {
        live.nextAt = clock.now() + (error.parameters.retry_after ?? 1) * 1000;
      } else if (live.via === "draft" && this.drafts.refused(live.key, live.chatId, error)) {
        live.via = "edit";
        live.nextAt = -Infinity;
      } else {
        if (isNotModified(error)) live.shown = text;
        live.nextAt = clock.now() + PREVIEW_EVERY_MS.editPrivate;
        throw error;
      }
    }
  }

  private async edit(live: Live, text: string, entities: { entities?: Formatted["entities"] }): Promise<void> {
    const { previewApi: api } = this.deps;
    if (live.messageId === null) {
      // A previous process streamed this session's reply into a message: the new stream goes on in it.
      live.messageId = (await this.takeOrphan(live.key)) ?? null;
      if (live.messageId !== null) await this.sync(live.key);
    }
    if (live.messageId !== null) {
      try {
        await api.editMessageText(live.chatId, live.messageId, text, { ...entities, link_preview_options: { is_disabled: true } });
        return;
      } catch (error) {
        if (!(error instanceof GrammyError && error.error_code === 400 && /message to edit not found|can't be edited/i.test(error.description))) throw error;
        live.messageId = null; // deleted by someone: a new one below
      }
    }
    const sent = await api.sendMessage(live.chatId, text, {
      ...entities,
      ...(live.threadId !== undefined ? { message_thread_id: live.threadId } : {}),
      link_preview_options: { is_disabled: true },
    });
    live.messageId = sent.message_id;
    await this.sync(live.key);
    this.deps.typing(live.key);
  }

  /** No more updates to this preview (its turn ended, or another agent speaks now). */
  private seal(live: Live): void {
    live.ended = true;
    this.stopTimer(live);
  }

  private drop(live: Live): void {
    const queue = (this.live.get(live.key) ?? []).filter((l) => l !== live);
    if (queue.length > 0) this.live.set(live.key, queue);
    else this.live.delete(live.key);
  }

  /** A preview whose reply never came: a draft just expires; an edited message is deleted (it was never the reply). */
  private async abandon(live: Live): Promise<void> {
    this.drop(live);
    live.closed = true;
    this.stopTimer(live);
    await live.busy;
    if (live.via === "edit" && live.messageId !== null) {
      await this.sync(live.key);
      await this.remove(live.key, live.chatId, live.messageId);
    }
  }

  private async remove(key: string, chatId: number, messageId: number): Promise<void> {
    await this.deps.previewApi
      .deleteMessage(chatId, messageId)
      .catch((error: unknown) => this.deps.log.warn({ err: error, session: key }, "could not delete a streamed message whose reply never came"));
  }

  private stopTimer(live: Live): void {
    if (live.timer !== null) this.deps.clock.clearTimeout(live.timer);
    live.timer = null;
  }

  /**
   * Remembers (durably, with the gateway) the session's edited previews that no reply has taken over yet, oldest
   * first, and the ones a previous process left: what a restart must deal with. Nothing left: forgotten.
   */
  private sync(key: string): Promise<void> {
    const chatId = parseTelegramKey(key).chatId;
    const ids = [
      ...(this.orphans.get(key)?.messageIds ?? []),
      ...(this.live.get(key) ?? []).filter((l) => !l.closed && l.via === "edit" && l.messageId !== null).map((l) => l.messageId!),
    ];
    if (ids.length === 0 && !this.recorded.has(key)) return Promise.resolve();
    if (ids.length > 0) this.recorded.add(key);
    else this.recorded.delete(key);
    const write = ids.length > 0 ? this.deps.memory.rememberIndicator(key, JSON.stringify({ chat: chatId, messages: ids })) : this.deps.memory.forgetIndicator(key);
    return write.catch((error: unknown) => this.deps.log.warn({ err: error, session: key }, "could not record the streamed messages"));
  }
}
