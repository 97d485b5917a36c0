import { randomUUID } from "node:crypto";

export interface Clock {
  now(): number;
}
export interface Ids {
  /** A new unique id with a readable prefix, e.g. "task_…". */
  next(prefix: string): string;
}

export const systemClock: Clock = { now: () => Date.now() };
/**
 * UUIDs (tasks, requests and sessions are UUIDs for API clients); approval ids are short, because a
 * Telegram button carries at most 64 bytes.
 */
export const randomIds: Ids = {
  next: (prefix) => (prefix === "ap" ? `ap_${randomUUID().replaceAll("-", "").slice(0, 10)}` : randomUUID()),
};

export interface RuntimeSettings {
  defaultModel: string;
  maxIterations: number;
  /** Hand-overs below main (use_skill, use_agent, call_agent). Default 5. */
  callDepthMax: number;
  /** call_agent's timeout when the model gives none. Default 30 000 ms. */
  callTimeoutMs: number;
  /** Compact a frame when its context reaches this share of the model's limit. Default 0.7. */
  compactionThreshold: number;
  /** Newest user messages kept verbatim by compaction, in tokens. Default 20 000. */
  compactionKeepTokens: number;
  /**
   * A tool result (or a child's result) longer than this many tokens is cut in the live history, with a note saying
   * how to read the rest (read_tool_result); the context log keeps it whole. Default 10 000 (TOOL_RESULT_MAX_TOKENS).
   */
  toolResultMaxTokens?: number;
  /** Context window per model from configuration; `*` is the fallback. Unlisted models ask the Models API. */
  contextTokens: Record<string, number>;
  /** How long an approval waits for the owner before it counts as denied. Default 24 h. */
  approvalTimeoutMs: number;
  /** Say in the chat when a child hands the conversation back ("Interview skill finished"). Default on. */
  handbackNotice?: boolean;
  /** Long-term memory (MEMORY): recall at task start, extraction after it. Default off here; on in the product. */
  memory?: boolean;
  /** Tokens a session may use between /resets (SESSION_TOKEN_BUDGET), checked before every model call; 0: no limit. */
  sessionTokenBudget?: number;
  /** USD a session may spend between /resets (SESSION_COST_BUDGET_USD), likewise; 0: no limit. */
  sessionCostBudgetUsd?: number;
  /** What an agent's file may weigh (MAX_FILE_BYTES) and what a conversation's files may (MAX_SESSION_FILE_BYTES, 0: no cap). */
  files?: { maxFileBytes: number; maxSessionBytes: number };
}

/** Timers for call timeouts; the simulation replaces them with virtual ones. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** The process's timers for background chores (lease renewals, retries, sweeps): they do not keep it alive. */
export const backgroundTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
