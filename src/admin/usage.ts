// The operator's view of the daily quotas' counters: each user's use on their current day (the newest day counted
// for them lately; a day is the user's own, so "today" differs between zones), the biggest spenders first.
import { nanoToUsd } from "../llm/prices.js";
import type { Store } from "../store/store.js";

/** Counters changed within this long are someone's today (a day is at most 26 hours in any zone). */
const LATELY_MS = 26 * 3600 * 1000;

export interface UserUsageItem {
  user: string;
  /** YYYY-MM-DD in the user's zone. */
  day: string;
  messages: number;
  costUsd: number;
  updatedAt: number;
}

export async function usageView(store: Pick<Store, "usage">, options: { now?: number; limit?: number } = {}): Promise<{ users: UserUsageItem[] }> {
  const now = options.now ?? Date.now();
  const newest = new Map<string, UserUsageItem>();
  // Ordered by user, newest day first: the first row of each user is their today.
  for (const u of await store.usage.recent("user", now - LATELY_MS)) {
    if (!newest.has(u.subject)) newest.set(u.subject, { user: u.subject, day: u.day, messages: u.messages, costUsd: nanoToUsd(u.costNanoUsd), updatedAt: u.updatedAt });
  }
  const users = [...newest.values()].sort((a, b) => b.costUsd - a.costUsd || b.messages - a.messages || (a.user < b.user ? -1 : 1));
  return { users: users.slice(0, options.limit ?? 100) };
}
