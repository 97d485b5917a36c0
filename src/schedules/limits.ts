// What one user may schedule. Cron's minute resolution already holds a job to at most one run a minute (checkCron).

/** SCHEDULE_MAX_PER_USER's default. */
export const DEFAULT_MAX_PER_USER = 20;

/** Null when a user holding `active` jobs may add one more; else the refusal, for the model or the chat. */
export function jobLimitProblem(active: number, max: number): string | null {
  if (active < max) return null;
  return `schedule: you already have ${active} scheduled jobs, the most one person may have (${max}); cancel one first (cancel_schedule, or /unschedule <id> in the chat)`;
}
