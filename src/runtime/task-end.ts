import { systemClock, type Clock } from "./deps.js";

/** How a task ended, as the line its end writes says it. */
export type TaskOutcome = "completed" | "failed" | "budget" | "quota" | "cancelled" | "expired";

/** What the line a task's end writes carries besides its ids: how it ended and how long since its first message. */
export function taskEnd(clock: Clock | undefined, outcome: TaskOutcome, startedAt: number): { outcome: TaskOutcome; durationMs: number } {
  return { outcome, durationMs: Math.max(0, (clock ?? systemClock).now() - startedAt) };
}
