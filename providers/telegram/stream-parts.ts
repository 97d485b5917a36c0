// The pieces of a streamed reply: the settings and clock, what each live preview holds, and the streamed messages a
// previous process left behind (remembered with the gateway, taken over after a restart).
import type { Api } from "grammy";
import type { Logger } from "pino";

export type StreamingMode = "draft" | "edit" | "off";

/** Time and timeouts for pacing previews; tests drive them by hand. */
export interface StreamClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemStreamClock: StreamClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Least time between two updates of one preview: drafts are cheap; edits count against Telegram's flood limits. */
export const PREVIEW_EVERY_MS = { draft: 300, editPrivate: 1000, editGroup: 3000 } as const;

/** Where a streamed message is remembered across restarts (Gateway.rememberIndicator / forgetIndicator). */
export interface StreamMemory {
  rememberIndicator(sessionKey: string, data: string): Promise<void>;
  forgetIndicator(sessionKey: string): Promise<void>;
}

/** What is remembered for a session now (the stored indicator row's data), or null. */
export type RememberedNow = (sessionKey: string) => Promise<string | null>;

export interface ReplyStreamsDeps {
  mode: StreamingMode;
  /** For previews: no auto-retry (a preview skips what it cannot show now rather than waiting). */
  previewApi: Api;
  /** For replies: the bot's own client, with auto-retry. */
  api: Api;
  memory: StreamMemory;
  /** Read again before a previous process's messages are deleted: another replica may have taken them over since. */
  remembered: RememberedNow;
  log: Logger;
  clock: StreamClock;
  /** The session's replies committed but not yet claimed for delivery. */
  pending(sessionKey: string): Promise<Array<{ agent: string; depth: number; kind: string }>>;
  /** How many requests of the session are still to run (a turn a restart will resume). */
  unfinished(sessionKey: string): Promise<number>;
  /** Shows "typing…" again now (a message the bot sends ends it on the user's screen). */
  typing(sessionKey: string): void;
}

export interface Live {
  key: string;
  chatId: number;
  threadId: number | undefined;
  agent: string;
  depth: number;
  via: "draft" | "edit";
  draftId: number;
  /** Everything the model has written so far, and what the user is shown of it. */
  text: string;
  shown: string;
  /** Edit mode: the message the reply becomes. */
  messageId: number | null;
  /** Nothing is sent before this (the pacing interval, or a 429's retry_after). */
  nextAt: number;
  running: boolean;
  busy: Promise<void>;
  timer: unknown;
  /** The turn ended (the reply, if any, is being delivered). */
  ended: boolean;
  /** Delivered or given up: no more updates. */
  closed: boolean;
}

/** Streamed messages a previous process left in a chat, oldest first (remembered with the gateway). */
export interface Orphans {
  chatId: number;
  messageIds: number[];
}

/** Remembered data: `{"chat":…,"messages":[…]}`, the session's edited previews not yet taken over by their reply. */
export function parseOrphans(data: string): Orphans | null {
  try {
    const value = JSON.parse(data) as { chat?: unknown; messages?: unknown };
    if (typeof value.chat !== "number" || !Array.isArray(value.messages)) return null;
    const messageIds = value.messages.filter((m): m is number => typeof m === "number");
    return messageIds.length > 0 ? { chatId: value.chat, messageIds } : null;
  } catch {
    return null;
  }
}
