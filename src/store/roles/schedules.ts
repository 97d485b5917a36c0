// The schedules role: scheduled jobs (the schedule tool, /schedules, the scheduler) and each user's time zone
// (/timezone). A job's due time moves on only by a compare-and-set on the due time it was read at, so of two
// replicas that both saw it due, one advances it; the run itself is deduplicated by its request's external id.
import type { Schedule } from "../../schedules/schedule.js";
import type { OutboundInput } from "./outbox.js";

/** active: runs when due; paused: a delivery failed for good (bot blocked, chat gone); done: a one-shot job ran. */
export type ScheduleJobStatus = "active" | "paused" | "done";

export interface ScheduleJobRecord {
  id: string;
  ownerId: string;
  /** The conversation it was scheduled in (chat, Telegram topic, Slack thread): its runs start there. */
  sessionKey: string;
  instruction: string;
  schedule: Schedule;
  timezone: string;
  /** The earliest due time not yet run or skipped; null once a one-shot job is over. */
  nextDue: number | null;
  status: ScheduleJobStatus;
  /** The due time of the last run or skip, and what became of it ("run", "skipped: …", "paused: …"). */
  lastDue: number | null;
  lastResult: string | null;
  /** The task that called `schedule`. */
  createdByTask: string | null;
  /** Where that task was in the traces when it scheduled the job (a W3C traceparent): each run's span links to it. */
  traceparent: string | null;
  createdAt: number;
}

/** A notice to queue with a move (the owner told about skipped runs): in the same transaction, so both or neither. */
export interface AdvanceNotice {
  sessionKey: string;
  message: OutboundInput;
}

export type NewScheduleJob = Omit<ScheduleJobRecord, "status" | "lastDue" | "lastResult" | "createdAt" | "traceparent"> & { traceparent?: string | null };

export interface ScheduleStore {
  /** Stores a job if its owner holds fewer than `maxPerUser` active or paused jobs; false (nothing stored) otherwise. */
  create(job: NewScheduleJob, maxPerUser: number): Promise<boolean>;
  get(id: string): Promise<ScheduleJobRecord | null>;
  /** The owner's jobs, oldest first; in one conversation when `sessionKey` is given. */
  list(ownerId: string, sessionKey?: string): Promise<ScheduleJobRecord[]>;
  /** Every job, oldest first, at most `limit` (the admin view). */
  all(limit: number): Promise<ScheduleJobRecord[]>;
  /** Active jobs due at or before `now`, earliest first, at most `limit`. */
  due(now: number, limit: number): Promise<ScheduleJobRecord[]>;
  /** The earliest due time of an active job, or null (the scheduler sleeps until then). */
  nextDue(): Promise<number | null>;
  /**
   * Moves a job on from the due time it was read at (`from`) to `next`, recording `lastDue` and `result`; a
   * one-shot job with no next due time is done. False when the job was moved on (or paused, or deleted) meanwhile.
   * With `notice`, the notice is queued to the outbox in the same transaction, and only when the job moved on: a
   * crash between the two cannot lose it, and of two replicas only the one that moved the job queues it.
   */
  advance(id: string, from: number, next: number | null, lastDue: number, result: string, notice?: AdvanceNotice): Promise<boolean>;
  /** Pauses an active job (a permanent delivery failure); false when it was not active. */
  pause(id: string, reason: string): Promise<boolean>;
  /** Deletes the owner's job; false when there is no such job of theirs. */
  cancel(id: string, ownerId: string): Promise<boolean>;
  /** The user's time zone from /timezone, or null. */
  timezone(userId: string): Promise<string | null>;
  setTimezone(userId: string, zone: string): Promise<void>;
}
