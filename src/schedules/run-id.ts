// A scheduled run's external id: the inbox stores one request per (session, external id), so two replicas or a
// restarted process that reach the same due time of the same job make the same id, and only one request.

const PREFIX = "schedule:";

/** `schedule:<job id>:<due time, ISO 8601 UTC>`: unique per job and due time, and never a platform's message id. */
export function runExternalId(jobId: string, due: number): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(jobId)) throw new Error(`runExternalId: "${jobId}" is not a job id`);
  if (!Number.isSafeInteger(due)) throw new Error(`runExternalId: ${due} is not a due time in milliseconds`);
  return `${PREFIX}${jobId}:${new Date(due).toISOString()}`;
}

/** The job and due time of a scheduled run's external id, or null for any other id (a platform's message id). */
export function parseRunExternalId(externalId: string): { jobId: string; due: number } | null {
  const m = /^schedule:([A-Za-z0-9_-]{1,64}):(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)$/.exec(externalId);
  if (!m) return null;
  const due = Date.parse(m[2]!);
  return Number.isNaN(due) || new Date(due).toISOString() !== m[2] ? null : { jobId: m[1]!, due };
}
