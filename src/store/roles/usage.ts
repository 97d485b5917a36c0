// The usage role: what each user and each chat spent on one day (messages taken in, USD of model calls), counted for
// the daily quotas (USER_DAILY_MESSAGES, USER_DAILY_USD, CHAT_DAILY_USD), and which limits a user was told about.
// A day is a calendar date in the user's time zone ("2026-11-27"); the caller decides it, the store only counts.

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
}

export const noUsage = (scope: UsageScope, subject: string, day: string): UsageDay => ({ scope, subject, day, messages: 0, costNanoUsd: 0, updatedAt: 0 });
