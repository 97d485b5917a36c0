// "Working on it" in Slack: the assistant thread status ("is thinking…") where the app has it, else a 👀 reaction
// on the user's message. What was shown is remembered through the gateway, so a process that dies mid-turn has its
// indicator taken back after the restart (and the resumed turn shows a fresh one).
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import { slackErrorCode, statusFailureScope } from "./errors.js";
import { parseSlackKey, RecentSet } from "./inbound.js";

export const STATUS_TEXT = "is thinking…";
export const WORKING_REACTION = "eyes";

/** Where the gateway keeps indicators across restarts (Gateway.rememberIndicator / forgetIndicator). */
export interface IndicatorMemory {
  rememberIndicator(sessionKey: string, data: string): Promise<void>;
  forgetIndicator(sessionKey: string): Promise<void>;
}

export type MessageRef = { channel: string; ts: string };

/** What is on screen; stored as JSON with the gateway. */
type Shown = { kind: "status"; channel: string; thread: string } | { kind: "reaction"; channel: string; ts: string; name: string };

/** Failures that mean the reaction or status is gone already: nothing left to take back. */
const ALREADY_GONE = new Set(["no_reaction", "message_not_found", "channel_not_found", "thread_not_found", "is_archived", "not_in_channel"]);

export class WorkingIndicators {
  /** Off for the whole app once Slack said the app cannot set statuses (missing_scope and the like). */
  private statusOff = false;
  /** Conversations where setStatus failed for that conversation only (not an assistant thread, thread gone). */
  private readonly noStatus = new RecentSet(10_000);
  /** The message each conversation's indicator goes on: its latest user message. */
  private readonly targets = new Map<string, MessageRef>();
  /**
   * Indicators being taken back (a finished turn's, or a stale one after a restart): the next turn in that
   * conversation waits for it, so a late "clear" never removes the new turn's indicator.
   */
  private readonly settling = new Map<string, Promise<void>>();
  /** The indicator each conversation has remembered with the gateway, so a late forget leaves a newer one alone. */
  private readonly live = new Map<string, Shown>();

  constructor(
    private readonly client: WebClient,
    private readonly memory: IndicatorMemory,
    private readonly log: Logger,
    /** The message of the request a restart resumes, when this process never saw it arrive. */
    private readonly resumedMessage: (sessionKey: string) => Promise<MessageRef | undefined>,
  ) {}

  /** Records the message a turn about to run answers; returns how to undo that if the gateway did not take it. */
  noteMessage(sessionKey: string, message: MessageRef): () => void {
    const previous = this.targets.get(sessionKey);
    this.targets.set(sessionKey, message);
    return () => {
      if (previous) this.targets.set(sessionKey, previous);
      else this.targets.delete(sessionKey);
    };
  }

  /** Shows that a turn runs in `sessionKey`; the returned function takes it back. */
  show(sessionKey: string): () => void {
    const { channel, threadTs } = parseSlackKey(sessionKey);
    const known = this.targets.get(sessionKey);
    let shown: Shown | null = null;
    const started = (async () => {
      const target = known ?? (await this.resumedMessage(sessionKey));
      // A DM outside threads has no thread of its own: the status goes on the message being answered.
      const thread = threadTs ?? target?.ts;
      await this.settling.get(sessionKey);
      if (thread && !this.statusOff && !this.noStatus.has(sessionKey)) {
        const status: Shown = { kind: "status", channel, thread };
        this.remember(sessionKey, status);
        try {
          await this.client.assistant.threads.setStatus({ channel_id: channel, thread_ts: thread, status: STATUS_TEXT });
          shown = status;
          return;
        } catch (error) {
          this.forget(sessionKey, status);
          this.statusFailed(sessionKey, error);
        }
      }
      if (!target) return;
      const reaction: Shown = { kind: "reaction", channel: target.channel, ts: target.ts, name: WORKING_REACTION };
      this.remember(sessionKey, reaction);
      try {
        await this.client.reactions.add({ channel: target.channel, timestamp: target.ts, name: WORKING_REACTION });
      } catch (error) {
        // Already there (a restart's stale 👀 that could not be taken back): it serves this turn as well.
        if (slackErrorCode(error) !== "already_reacted") {
          this.forget(sessionKey, reaction);
          throw error;
        }
      }
      shown = reaction;
    })().catch((error: unknown) => this.log.debug({ err: error, session: sessionKey }, "could not show the working status"));
    return () => {
      const done = started.then(async () => {
        if (!shown) return;
        await this.takeBack(shown);
        this.forget(sessionKey, shown);
      });
      this.settle(
        sessionKey,
        done.catch((error: unknown) => this.log.debug({ err: error, session: sessionKey }, "could not clear the working status; a restart will")),
      );
    };
  }

  /**
   * Takes back an indicator a previous process showed (`data` as remembered). Its message is where a resumed turn
   * shows its own again. Rejects when Slack could not be reached, so the gateway keeps it for the next start.
   */
  clear(sessionKey: string, data: string): Promise<void> {
    const shown = parseShown(data);
    if (!shown) return Promise.resolve();
    if (!this.targets.has(sessionKey)) {
      this.targets.set(sessionKey, shown.kind === "reaction" ? { channel: shown.channel, ts: shown.ts } : { channel: shown.channel, ts: shown.thread });
    }
    const done = this.takeBack(shown);
    this.settle(
      sessionKey,
      done.catch(() => {}),
    );
    return done;
  }

  private settle(sessionKey: string, settled: Promise<void>): void {
    this.settling.set(sessionKey, settled);
    void settled.then(() => {
      if (this.settling.get(sessionKey) === settled) this.settling.delete(sessionKey);
    });
  }

  private async takeBack(shown: Shown): Promise<void> {
    try {
      if (shown.kind === "status") {
        await this.client.assistant.threads.setStatus({ channel_id: shown.channel, thread_ts: shown.thread, status: "" });
      } else {
        await this.client.reactions.remove({ channel: shown.channel, timestamp: shown.ts, name: shown.name });
      }
    } catch (error) {
      const code = slackErrorCode(error);
      if (code !== undefined && ALREADY_GONE.has(code)) return;
      // Statuses expire on their own after two minutes; one the app can no longer clear is nothing to keep.
      if (shown.kind === "status" && statusFailureScope(error) !== "transient") return;
      throw error;
    }
  }

  private statusFailed(sessionKey: string, error: unknown): void {
    const scope = statusFailureScope(error);
    if (scope === "app") {
      this.statusOff = true;
      this.log.info({ err: error }, "assistant thread status unavailable for this app; using a 👀 reaction instead");
    } else if (scope === "conversation") {
      this.noStatus.add(sessionKey);
      this.log.debug({ err: error, session: sessionKey }, "no assistant thread status in this conversation; using a 👀 reaction");
    }
  }

  private remember(sessionKey: string, shown: Shown): void {
    this.live.set(sessionKey, shown);
    this.memory
      .rememberIndicator(sessionKey, JSON.stringify(shown))
      .catch((error: unknown) => this.log.warn({ err: error, session: sessionKey }, "could not record the working status; a restart will not take it back"));
  }

  private forget(sessionKey: string, shown: Shown): void {
    if (this.live.get(sessionKey) !== shown) return;
    this.live.delete(sessionKey);
    this.memory.forgetIndicator(sessionKey).catch((error: unknown) => this.log.warn({ err: error, session: sessionKey }, "could not forget the working status"));
  }
}

function parseShown(data: string): Shown | null {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  if (v.kind === "status" && typeof v.channel === "string" && typeof v.thread === "string") return { kind: "status", channel: v.channel, thread: v.thread };
  if (v.kind === "reaction" && typeof v.channel === "string" && typeof v.ts === "string" && typeof v.name === "string") {
    return { kind: "reaction", channel: v.channel, ts: v.ts, name: v.name };
  }
  return null;
}
