// The usage role: what each user and each chat spent on one day (messages taken in, USD of model calls), counted for
// the daily quotas (USER_DAILY_MESSAGES, USER_DAILY_USD, CHAT_DAILY_USD), and which limits a user was told about.
// A day is a calendar date in the user's time zone ("2026-11-27"); the caller decides it, the store only counts.
// While a model call runs, its estimated cost is held on its counters, so calls started together see each other
// (a fan-out of children cannot all pass a limit only one of them fits under); a hold carries an expiry, so one left
// by a process that died mid-call stops counting by itself. A request a quota refused is recorded with the limit.

/** Whose counter: one user in every chat, or one chat (a session key) for all its members. */
export type UsageScope = "user" | "chat";

export interface UsageDay {
  scope: UsageScope;
  subject: string;
  /** YYYY-MM-DD, in the zone the caller counts days in. */
  day: string;
  messages: number;
  costNanoUsd: number;
  updatedAt: number;
}

export interface UsageIncrement {
  scope: UsageScope;
  subject: string;
  day: string;
  messages?: number;
  costNanoUsd?: number;
}

export interface UsageStore {
  /** Adds to each counter (created at zero when missing); every increment in one transaction. */
  add(increments: readonly UsageIncrement[]): Promise<void>;
  /** One counter; zeros when nothing was counted that day. */
  get(scope: UsageScope, subject: string, day: string): Promise<UsageDay>;
  /**
   * Marks `limit` as told to `subject` on `day`: true the first time only (a compare-and-set, so of several
   * replicas exactly one tells the user).
   */
  tell(scope: UsageScope, subject: string, day: string, limit: string): Promise<boolean>;
  /** The counters of `scope` changed since `since` (ms), by subject, newest day first (the admin view's "today"). */
  recent(scope: UsageScope, since: number): Promise<UsageDay[]>;
  /**
   * In one transaction, serialised with every other hold, settle and release on the same counters (and on every
   * replica): refused (`over`) when a counter with a limit has its spent cost plus its live holds at or over that
   * limit; else `costNanoUsd` is held on every counter until settled, released or `ttlMs` after now (store clock).
   */
  hold(hold: UsageHold): Promise<HoldResult>;
  /** Ends hold `id` and adds what the call cost, in one transaction; the increments count even if the hold expired. */
  settle(id: string, increments: readonly UsageIncrement[]): Promise<void>;
  /** Ends hold `id` with nothing counted (its call failed). */
  release(id: string): Promise<void>;
  /** What live holds keep on one counter now, in nano-USD. */
  held(scope: UsageScope, subject: string, day: string): Promise<number>;
  /** Records that a request was refused by a quota; a second record of the same request is ignored. */
  refused(refusal: Omit<QuotaRefusalRecord, "createdAt">): Promise<void>;
  refusal(requestId: string): Promise<QuotaRefusalRecord | null>;
}

export interface HoldCounter {
  scope: UsageScope;
  subject: string;
  day: string;
  /** The counter's limit in nano-USD; 0: none (held, never refused). */
  limitNanoUsd: number;
}

/** A model call's estimated cost, held on its counters while it runs. */
export interface UsageHold {
  id: string;
  costNanoUsd: number;
  /** How long the hold counts if nobody settles or releases it (its call's process died). */
  ttlMs: number;
  counters: readonly HoldCounter[];
}

export type HoldResult = { status: "held" } | { status: "over"; scope: UsageScope; subject: string; day: string; usedNanoUsd: number };

/** A request a daily quota refused: which limit, and when it resets (ms). */
export interface QuotaRefusalRecord {
  requestId: string;
  sessionKey: string;
  userId: string;
  limit: string;
  resetsAt: number;
  createdAt: number;
}

/** Counters in one order, so that two holds lock shared counters in the same order (no deadlock). */
export const lockOrder = <T extends { scope: string; subject: string; day: string }>(counters: readonly T[]): T[] =>
  [...counters].sort((a, b) => counterKey(a).localeCompare(counterKey(b)));

export const counterKey = (c: { scope: string; subject: string; day: string }): string => `${c.scope}\u001f${c.subject}\u001f${c.day}`;

export const noUsage = (scope: UsageScope, subject: string, day: string): UsageDay => ({ scope, subject, day, messages: 0, costNanoUsd: 0, updatedAt: 0 });
