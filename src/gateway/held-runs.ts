// A scheduled run is an instruction the user gave earlier, not what they say now. While the conversation's task
// waits for the user (a child agent asked a question) or for an approval, the next message there is their answer
// to it, so a scheduled run queued in that conversation is held back: the worker runs the messages behind it (the
// answer, the decision) and the run starts its own task once the waiting one has ended, like a message waiting its
// turn. It is not kept forever: still held SCHEDULE_GRACE after its due time, it is skipped and its owner told.
import type { RequestRecord, SessionWriter, Store } from "../store/store.js";
import { durationText } from "../schedules/describe.js";
import { parseRunExternalId } from "../schedules/run-id.js";
import type { Replies } from "./replies.js";

export interface HeldRunsDeps {
  store: Pick<Store, "tasks">;
  replies: Pick<Replies, "reply">;
  now: () => number;
  /** SCHEDULE_GRACE. */
  graceMs: number;
}

/** A scheduled run's request: never the user's own words, so it never joins a running frame (MID_TURN=steer). */
export function isScheduledRun(request: Pick<RequestRecord, "externalId">): boolean {
  return parseRunExternalId(request.externalId) !== null;
}

const WAITING = new Set(["waiting_user", "waiting_approval"]);

/**
 * Whether the worker must pass over `request` for now: a scheduled run while the task waits for the user. One held
 * past the grace is ended here (done, with a notice to its owner), so it is passed over for good.
 */
export async function holdsBack(deps: HeldRunsDeps, request: RequestRecord, writer: SessionWriter): Promise<boolean> {
  const run = request.status === "pending" ? parseRunExternalId(request.externalId) : null;
  if (!run) return false;
  const task = await deps.store.tasks.active(request.sessionKey);
  const now = deps.now();
  // A task past its expiry waits for nothing any more: the run goes ahead (the orchestrator ends that task first).
  if (!task || !WAITING.has(task.status) || (task.expiresAt !== null && task.expiresAt <= now)) return false;
  if (now - run.due < deps.graceMs) return true;
  await deps.replies.reply(request, writer, skippedWhileWaiting(run.jobId, run.due, task.status, deps.graceMs));
  return true;
}

export function skippedWhileWaiting(jobId: string, due: number, status: string, graceMs: number): string {
  const what = status === "waiting_approval" ? "your approval" : "your answer";
  return (
    `Skipped the scheduled run of job ${jobId} due ${new Date(due).toISOString()}: this chat was waiting for ${what} ` +
    `for ${durationText(graceMs)} after it was due. /schedules lists your jobs.`
  );
}
